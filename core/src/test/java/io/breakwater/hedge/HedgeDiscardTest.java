package io.breakwater.hedge;

import static io.breakwater.Breakwater.hedgedBy;
import static io.breakwater.hedge.FirstTokenHedgingTest.DELAY;
import static io.breakwater.hedge.FirstTokenHedgingTest.IS_CONTENT;
import static io.breakwater.hedge.HedgedByTest.VERIFY;
import static io.breakwater.hedge.HedgedByTest.fill;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.test.StepVerifier;
import reactor.test.publisher.PublisherProbe;
import reactor.test.publisher.TestPublisher;

/**
 * What a hedged call drops goes to Reactor's discard hook (the Context's {@code Hooks.onDiscard}), as in every
 * Reactor operator: the framing an attempt held before it failed or lost ("a loser's are dropped", docs/hedging.md),
 * the items a loser sends after the race was decided, and whatever of the winner's head the caller cancelled before
 * requesting.
 */
class HedgeDiscardTest {

  HedgePolicy policy() {
    HedgePolicy policy = HedgePolicy.builder().name("discard").delay(DELAY).budget(1.0)
        .meterRegistry(new SimpleMeterRegistry()).build();
    fill(policy, 1);
    return policy;
  }

  /** The primary sends framing, then loses to a hedge that answers at once. */
  private StepVerifier.Step<String> primaryLosesHoldingFraming(TestPublisher<String> primary) {
    HedgePolicy policy = policy();
    List<Supplier<Flux<String>>> alternates = List.of(
        () -> Flux.just("meta:hedge", "token").concatWith(Flux.never()));
    return StepVerifier.withVirtualTime(() -> primary.flux()
            .transformDeferred(hedgedBy(policy, IS_CONTENT, alternates)))
        .expectSubscription()
        .then(() -> primary.next("meta:primary"))
        .thenAwait(DELAY)
        .expectNext("meta:hedge", "token");
  }

  @Test
  void aLoserThatKeepsSendingAfterTheRaceIsDecidedHasItsFramingAndItsLateItemsDiscarded() {
    TestPublisher<String> primary = TestPublisher.createNoncompliant(TestPublisher.Violation.DEFER_CANCELLATION);
    primaryLosesHoldingFraming(primary)
        .then(() -> primary.next("late"))   // the primary ignores its cancellation
        .thenCancel()
        .verifyThenAssertThat(VERIFY)
        .hasDiscarded("meta:primary", "late")
        .hasNotDroppedElements();
  }

  @Test
  void aLoserThatStopsWhenCancelledHasItsFramingDiscarded() {
    TestPublisher<String> primary = TestPublisher.create();
    primaryLosesHoldingFraming(primary)
        .then(primary::assertCancelled)
        .thenCancel()
        .verifyThenAssertThat(VERIFY)
        .hasDiscarded("meta:primary")
        .hasNotDroppedElements();
  }

  @Test
  void aCallerThatCancelsWhileAttemptsRaceHasTheirFramingDiscarded() {
    HedgePolicy policy = policy();
    TestPublisher<String> primary = TestPublisher.create();
    TestPublisher<String> hedge = TestPublisher.create();
    List<Supplier<Flux<String>>> alternates = List.of(hedge::flux);
    StepVerifier.withVirtualTime(() -> primary.flux().transformDeferred(hedgedBy(policy, IS_CONTENT, alternates)))
        .expectSubscription()
        .then(() -> primary.next("meta:primary"))
        .thenAwait(DELAY)
        .then(() -> hedge.next("meta:hedge"))
        .thenCancel()
        .verifyThenAssertThat(VERIFY)
        .hasDiscarded("meta:primary", "meta:hedge");
    primary.assertCancelled();
    hedge.assertCancelled();
  }

  @Test
  void aMonoLoserThatAnswersAfterTheRaceIsDecidedHasItsValueDiscarded() {
    HedgePolicy policy = policy();
    AtomicReference<CoreSubscriber<? super String>> attempt = new AtomicReference<>();
    Mono<String> primary = new Mono<>() {   // ignores its cancellation
      @Override
      public void subscribe(CoreSubscriber<? super String> actual) {
        attempt.set(actual);
        actual.onSubscribe(Operators.emptySubscription());
      }
    };
    StepVerifier.withVirtualTime(() -> primary
            .transformDeferred(hedgedBy(policy, List.<Supplier<Mono<String>>>of(() -> Mono.just("hedge")))))
        .expectSubscription()
        .thenAwait(DELAY)
        .expectNext("hedge")
        .then(() -> attempt.get().onNext("late"))
        .expectComplete()
        .verifyThenAssertThat(VERIFY)
        .hasDiscarded("late");
  }

  @Test
  void anAttemptThatFailsBeforeItsFirstContentHasItsFramingDiscarded() {
    HedgePolicy policy = policy();
    StepVerifier.withVirtualTime(() -> FirstTokenHedgingTest.timed(10, "meta", 20, "meta:usage")
            .concatWith(Mono.delay(Duration.ofMillis(10)).then(Mono.error(new IOException("reset"))))
            .transformDeferred(hedgedBy(policy, IS_CONTENT)))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(30))
        .expectError(IOException.class)
        .verifyThenAssertThat(VERIFY)
        .hasDiscarded("meta", "meta:usage");
  }

  @Test
  void anAttemptWhosePredicateThrowsHasItsFramingDiscarded() {
    HedgePolicy policy = policy();
    StepVerifier.withVirtualTime(() -> FirstTokenHedgingTest.timed(10, "meta", 20, "poison")
            .transformDeferred(hedgedBy(policy, s -> {
              if (s.equals("poison")) {
                throw new IllegalStateException("bad item");
              }
              return IS_CONTENT.test(s);
            })))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(20))
        .expectErrorMessage("bad item")
        .verifyThenAssertThat(VERIFY)
        .hasDiscarded("meta");
  }

  @Test
  void anAttemptSendingTooMuchBeforeItsFirstContentHasAllOfItDiscarded() {
    HedgePolicy policy = policy();
    PublisherProbe<String> stream = PublisherProbe.of(Flux.range(0, 257).map(i -> "meta" + i));
    StepVerifier.create(stream.flux().transformDeferred(hedgedBy(policy, IS_CONTENT)))
        .expectError(IllegalStateException.class)
        .verifyThenAssertThat(VERIFY)
        .hasDiscarded("meta0", "meta255", "meta256");
    stream.assertWasCancelled();
  }

  @Test
  void aCallerThatCancelsBeforeRequestingTheWinnersHeadHasItDiscarded() {
    HedgePolicy policy = policy();
    StepVerifier.withVirtualTime(() -> FirstTokenHedgingTest.timed(10, "meta", 20, "token").concatWith(Flux.never())
            .transformDeferred(hedgedBy(policy, IS_CONTENT)), 0)
        .expectSubscription()
        .thenAwait(Duration.ofMillis(20))   // the primary has won with its framing and first token, none requested
        .thenCancel()
        .verifyThenAssertThat(VERIFY)
        .hasDiscarded("meta", "token");
  }
}
