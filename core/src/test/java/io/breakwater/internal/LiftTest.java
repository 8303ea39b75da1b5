package io.breakwater.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.subscriber.TestSubscriber;

/** {@link Lift#apply}: the wrapper every hand-written operator subscribes through, and how it reaches upstream. */
class LiftTest {

  /** Passes signals through, recording whether each subscription was told its source is a Mono. */
  private static <T> Lift.OnSubscribe<T> passThrough(List<Boolean> monoFlags) {
    return (source, actual, mono) -> {
      monoFlags.add(mono);
      Lift.subscribeUpstream(source, actual);
    };
  }

  @Test
  void aMonoStaysAMonoAndIsSubscribedAsOne() {
    List<Boolean> flags = new ArrayList<>();
    Publisher<Integer> lifted = Lift.apply(Mono.just(1), "deadline", passThrough(flags));

    assertThat(lifted).isInstanceOf(Mono.class);
    StepVerifier.create(lifted).expectNext(1).verifyComplete();
    assertThat(flags).containsExactly(true);
  }

  @Test
  void aFluxOrAPublisherReactorDoesNotKnowBecomesAFluxSubscribedAsOne() {
    List<Boolean> flags = new ArrayList<>();
    Publisher<Integer> plain = subscriber -> Flux.just(1, 2).subscribe(subscriber);

    Publisher<Integer> fromFlux = Lift.apply(Flux.just(1, 2), "streamTimeouts", passThrough(flags));
    Publisher<Integer> fromPlain = Lift.apply(plain, "streamTimeouts", passThrough(flags));

    assertThat(fromFlux).isInstanceOf(Flux.class);
    assertThat(fromPlain).isInstanceOf(Flux.class);
    StepVerifier.create(fromFlux).expectNext(1, 2).verifyComplete();
    StepVerifier.create(fromPlain).expectNext(1, 2).verifyComplete();
    assertThat(flags).containsExactly(false, false);
  }

  @Test
  void reactorsScansNameTheWrapperAfterItsOperatorAndSeeItsSource() {
    Mono<Integer> mono = Mono.just(1);
    Flux<Integer> flux = Flux.just(1);

    Scannable monoLift = Scannable.from(Lift.apply(mono, "deadline", (s, a, m) -> {}));
    Scannable fluxLift = Scannable.from(Lift.apply(flux, "guardedBy", (s, a, m) -> {}));

    assertThat(monoLift.name()).isEqualTo("deadline");
    assertThat(monoLift.scan(Scannable.Attr.PARENT)).isSameAs(mono);
    assertThat(fluxLift.name()).isEqualTo("guardedBy");
    assertThat(fluxLift.scan(Scannable.Attr.PARENT)).isSameAs(flux);
  }

  @Test
  void aPublisherReactorDoesNotKnowIsSubscribedUpstreamThroughItsOwnSubscribe() {
    Publisher<String> plain = subscriber -> Flux.just("a", "b").subscribe(subscriber);
    TestSubscriber<String> subscriber = TestSubscriber.create();

    Lift.subscribeUpstream(plain, subscriber);

    assertThat(subscriber.getReceivedOnNext()).containsExactly("a", "b");
    assertThat(subscriber.isTerminatedComplete()).isTrue();
  }
}
