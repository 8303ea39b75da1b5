package io.breakwater.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.breakwater.failure.HttpStatusException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.publisher.PublisherProbe;

class ChaosTest {

  private static List<Boolean> hits(Fault<?> fault, int n) {
    List<Boolean> hits = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      hits.add(fault.hitsNext());
    }
    return hits;
  }

  @Test
  void seededRateHitsTheGivenShareRepeatably() {
    Fault<Object> fault = Chaos.error(IllegalStateException::new).rate(0.2).seed(42);
    List<Boolean> first = hits(fault, 10_000);
    List<Boolean> again = hits(Chaos.error(IllegalStateException::new).rate(0.2).seed(42), 10_000);
    List<Boolean> otherSeed = hits(Chaos.error(IllegalStateException::new).rate(0.2).seed(43), 10_000);

    long hitCount = first.stream().filter(b -> b).count();
    // 10 000 trials at p = 0.2: standard deviation 40, so ±200 is five of them.
    assertThat(hitCount).isBetween(1_800L, 2_200L);
    assertThat(again).isEqualTo(first);
    assertThat(otherSeed).isNotEqualTo(first);
  }

  @Test
  void rateZeroNeverHitsAndRateOneAlwaysDoes() {
    assertThat(hits(Chaos.latency(Duration.ofSeconds(1)).rate(0), 1000)).containsOnly(false);
    assertThat(hits(Chaos.latency(Duration.ofSeconds(1)), 1000)).containsOnly(true);
  }

  @Test
  void switchTurnsInjectionOffAndOnAtRunTime() {
    AtomicBoolean chaosOn = new AtomicBoolean(false);
    Fault<String> fault = Chaos.<String>error(() -> new HttpStatusException(503)).enabledWhen(chaosOn::get);
    Mono<String> call = Mono.just("ok").transformDeferred(Chaos.inject(fault));

    StepVerifier.create(call).expectNext("ok").verifyComplete();
    chaosOn.set(true);
    StepVerifier.create(call).expectError(HttpStatusException.class).verify();
    chaosOn.set(false);
    StepVerifier.create(call).expectNext("ok").verifyComplete();
  }

  @Test
  void latencyDelaysTheCallInVirtualTime() {
    StepVerifier.withVirtualTime(() -> Mono.just("slow")
            .transformDeferred(Chaos.inject(Chaos.latency(Duration.ofSeconds(28)))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(28).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectNext("slow")
        .verifyComplete();
  }

  @Test
  void errorFailsWithoutMakingTheCall() {
    PublisherProbe<String> call = PublisherProbe.of(Mono.just("ok"));
    StepVerifier.create(call.mono().transformDeferred(Chaos.inject(Chaos.error(() -> new HttpStatusException(429)))))
        .expectErrorSatisfies(e -> assertThat(((HttpStatusException) e).status()).isEqualTo(429))
        .verify();
    call.assertWasNotSubscribed();
  }

  @Test
  void stallLetsItemsThroughThenGoesSilentAndCancelsUpstream() {
    PublisherProbe<Long> stream = PublisherProbe.of(Flux.interval(Duration.ofSeconds(1)));
    StepVerifier.withVirtualTime(() -> stream.flux().transformDeferred(Chaos.inject(Chaos.stallAfter(2))))
        .thenAwait(Duration.ofSeconds(2))
        .expectNext(0L, 1L)
        .expectNoEvent(Duration.ofHours(1))
        .thenCancel()
        .verify();
    stream.assertWasCancelled();
  }

  @Test
  void stalledMonoNeverAnswers() {
    StepVerifier.withVirtualTime(() -> Mono.just("ok").transformDeferred(Chaos.inject(Chaos.stallAfter(0))))
        .expectSubscription()
        .expectNoEvent(Duration.ofHours(1))
        .thenCancel()
        .verify();
  }

  @Test
  void truncationCompletesEarly() {
    StepVerifier.create(Flux.range(1, 10).transformDeferred(Chaos.inject(Chaos.truncateAfter(3))))
        .expectNext(1, 2, 3)
        .verifyComplete();
  }

  @Test
  void heartbeatsOnlyStreamIsAliveButNeverProgresses() {
    PublisherProbe<String> tokens = PublisherProbe.of(Flux.just("Hello", "world"));
    StepVerifier.withVirtualTime(() -> tokens.flux()
            .transformDeferred(Chaos.inject(Chaos.heartbeatsOnly(() -> ": ping", Duration.ofSeconds(15)))))
        .thenAwait(Duration.ofSeconds(45))
        .expectNext(": ping", ": ping", ": ping")
        .thenCancel()
        .verify();
    tokens.assertWasNotSubscribed();
  }

  @Test
  void aLatencyOfForeverHoldsTheCallInsteadOfFailingIt() {
    // ChronoUnit.FOREVER.getDuration(), the natural "hang": Mono.delay's toNanos() threw at subscription
    StepVerifier.withVirtualTime(() -> Mono.just("slow")
            .transformDeferred(Chaos.inject(Chaos.latency(Duration.ofSeconds(Long.MAX_VALUE)))))
        .expectSubscription()
        .expectNoEvent(Duration.ofDays(365L * 70))   // timers are capped at 73 years, forever enough
        .thenCancel()
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void heartbeatsEveryForeverNeverComeAndNeverFail() {
    StepVerifier.withVirtualTime(() -> Flux.just("Hello")
            .transformDeferred(Chaos.inject(Chaos.heartbeatsOnly(() -> ": ping", Duration.ofSeconds(Long.MAX_VALUE)))))
        .expectSubscription()
        .expectNoEvent(Duration.ofDays(365L * 70))   // timers are capped at 73 years, forever enough
        .thenCancel()
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void aHeartbeatIntervalBelowOneMillisecondIsRefusedAtBuildNotABusyLoop() {
    assertThatIllegalArgumentException().isThrownBy(() -> Chaos.heartbeatsOnly(() -> "x", Duration.ofNanos(1)))
        .withMessage("Heartbeat interval is PT0.000000001S: give a positive duration of 1 ms or more");
  }

  @Test
  void monoStaysMonoAndMissesPassThrough() {
    AtomicInteger calls = new AtomicInteger();
    Mono<Integer> call = Mono.fromCallable(calls::incrementAndGet)
        .transformDeferred(Chaos.inject(Chaos.error(IllegalStateException::new).rate(0)));
    assertThat(Chaos.<Integer>inject(Chaos.latency(Duration.ZERO)).apply(Mono.just(1))).isInstanceOf(Mono.class);

    StepVerifier.create(call).expectNext(1).verifyComplete();
  }

  @Test
  void badSettingsAreRejectedWithWhatToChange() {
    assertThatIllegalArgumentException().isThrownBy(() -> Chaos.latency(Duration.ofSeconds(1)).rate(1.5))
        .withMessageContaining("between 0 and 1");
    assertThatIllegalArgumentException().isThrownBy(() -> Chaos.stallAfter(-1)).withMessageContaining("0 or more");
    assertThatIllegalArgumentException().isThrownBy(() -> Chaos.heartbeatsOnly(() -> "x", Duration.ZERO))
        .withMessageContaining("positive");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> Mono.just("x").transformDeferred(Chaos.inject(Chaos.heartbeatsOnly(() -> "x",
            Duration.ofSeconds(1)))).block())
        .withMessageContaining("applies to streams");
  }
}
