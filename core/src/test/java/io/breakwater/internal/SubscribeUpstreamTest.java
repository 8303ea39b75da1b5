package io.breakwater.internal;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.throttledBy;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * {@link Lift#subscribeUpstream}: the breaker's and the limits' subscribers reach their upstream as Reactor's own
 * operators do, and lose nothing that the public {@code subscribe(Subscriber)} gave them.
 */
class SubscribeUpstreamTest {

  private static final String HOOK = "SubscribeUpstreamTest";

  @AfterEach
  void resetHooks() {
    Hooks.resetOnLastOperator(HOOK);
    Hooks.disableAutomaticContextPropagation();
  }

  @Test
  void theLastOperatorHookRunsOncePerSubscriptionThroughAChainOfBreakwaterOperators() {
    // built first: a breaker subscribes to its state store's transitions when it is built
    ConcurrencyLimit limit = ConcurrencyLimit.fixed(4);
    RateLimit rate = RateLimit.builder("hooked").requests(100, Duration.ofSeconds(1)).build();
    CircuitBreaker breaker = CircuitBreaker.ofDefaults("hooked");
    AtomicInteger hooked = new AtomicInteger();
    Hooks.onLastOperator(HOOK, publisher -> {
      hooked.incrementAndGet();
      return publisher;
    });
    Mono<Integer> call = Mono.fromSupplier(() -> 42)
        .transformDeferred(limitedBy(limit))
        .transformDeferred(throttledBy(rate))
        .transformDeferred(guardedBy(breaker));

    assertThat(call.block(Duration.ofSeconds(5))).isEqualTo(42);

    assertThat(hooked).as("once, for the last operator the caller subscribed, not again at each operator's upstream")
        .hasValue(1);
  }

  @Test
  void aStreamReachesItsUpstreamTheSameWay() {
    AtomicInteger hooked = new AtomicInteger();
    Hooks.onLastOperator(HOOK, publisher -> {
      hooked.incrementAndGet();
      return publisher;
    });
    ConcurrencyLimit limit = ConcurrencyLimit.fixed(1);

    StepVerifier.create(Flux.just(1, 2, 3).transformDeferred(limitedBy(limit)))
        .expectNext(1, 2, 3)
        .verifyComplete();

    assertThat(hooked).hasValue(1);
    assertThat(limit.inFlight()).isZero();
  }

  @Test
  void aSourceThatThrowsWhileSubscribedFailsTheCallAndGivesItsPermitBack() {
    ConcurrencyLimit limit = ConcurrencyLimit.fixed(1);
    Mono<Integer> throwing = new Mono<>() {
      @Override
      public void subscribe(CoreSubscriber<? super Integer> actual) {
        throw new IllegalStateException("broken source");
      }
    };

    StepVerifier.create(throwing.transformDeferred(limitedBy(limit)))
        .expectErrorMessage("broken source")
        .verify(Duration.ofSeconds(5));
    assertThat(limit.inFlight()).isZero();
    StepVerifier.create(Mono.just(1).transformDeferred(limitedBy(limit)))
        .expectNext(1)
        .verifyComplete();

    StepVerifier.create(throwing.transformDeferred(throttledBy(RateLimit.builder("throws")
            .requests(10, Duration.ofSeconds(1)).build())))
        .expectErrorMessage("broken source")
        .verify(Duration.ofSeconds(5));
    StepVerifier.create(throwing.transformDeferred(guardedBy(CircuitBreaker.ofDefaults("throws"))))
        .expectErrorMessage("broken source")
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void withAutomaticContextPropagationAForeignSourcesSignalsStillSeeTheThreadLocals() {
    Hooks.enableAutomaticContextPropagation();
    // a publisher Reactor does not know, answering on a thread of its own
    Mono<String> foreign = new Mono<>() {
      @Override
      public void subscribe(CoreSubscriber<? super String> actual) {
        actual.onSubscribe(new Subscription() {
          @Override
          public void request(long n) {
            Schedulers.single().schedule(() -> {
              actual.onNext("answer");
              actual.onComplete();
            });
          }

          @Override
          public void cancel() {
            // nothing to stop
          }
        });
      }
    };

    String seen = foreign
        .transformDeferred(limitedBy(ConcurrencyLimit.fixed(4)))
        .map(answer -> Deadline.current().map(Deadline::name).orElse("none"))
        .transformDeferred(withDeadline(DeadlineSpec.builder(Duration.ofSeconds(30)).name("plan-trip").build()))
        .block(Duration.ofSeconds(10));

    assertThat(seen).isEqualTo("plan-trip");
  }
}
