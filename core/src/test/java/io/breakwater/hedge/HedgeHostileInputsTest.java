package io.breakwater.hedge;

import static io.breakwater.Breakwater.hedgedBy;
import static io.breakwater.Breakwater.withDeadline;
import static io.breakwater.hedge.HedgedByTest.DELAY;
import static io.breakwater.hedge.HedgedByTest.VERIFY;
import static io.breakwater.hedge.HedgedByTest.fill;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.deadline.DeadlineExceededException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.test.StepVerifier;
import reactor.test.publisher.PublisherProbe;
import reactor.test.publisher.TestPublisher;

/** Re-entrant signals, misbehaving sources and odd inputs. */
class HedgeHostileInputsTest {

  HedgePolicy policy() {
    HedgePolicy policy = HedgePolicy.builder().name("hostile").delay(DELAY).budget(1.0).maxHedges(2)
        .meterRegistry(new SimpleMeterRegistry()).build();
    fill(policy, 2);
    return policy;
  }

  @Test
  void aHedgeThatAnswersDuringItsOwnSubscriptionWinsAtOnce() {
    HedgePolicy policy = policy();
    PublisherProbe<String> primary = PublisherProbe.of(Mono.never());
    StepVerifier.withVirtualTime(() -> primary.mono()
            .transformDeferred(hedgedBy(policy, List.<Supplier<Mono<String>>>of(() -> Mono.just("cached")))))
        .expectSubscription()
        .expectNoEvent(DELAY)
        .expectNext("cached")
        .expectComplete()
        .verify(VERIFY);
    primary.assertWasCancelled();
  }

  @Test
  void aMonosWinningValueCompletesTheCallWithoutWaitingForItsSourceToComplete() {
    HedgePolicy policy = policy();
    AtomicReference<CoreSubscriber<? super String>> attempt = new AtomicReference<>();
    Mono<String> primary = new Mono<>() {
      @Override
      public void subscribe(CoreSubscriber<? super String> actual) {
        attempt.set(actual);
        actual.onSubscribe(Operators.emptySubscription());
      }
    };
    StepVerifier.withVirtualTime(() -> primary.transformDeferred(hedgedBy(policy)))
        .expectSubscription()
        .then(() -> attempt.get().onNext("answer"))   // the source itself never completes
        .expectNext("answer")
        .expectComplete()
        .verify(VERIFY);
  }

  @Test
  void anAlternateSupplyingNullCountsAsAFailedAttempt() {
    HedgePolicy policy = policy();
    StepVerifier.withVirtualTime(() -> Mono.delay(Duration.ofMillis(250)).thenReturn("primary")
            .transformDeferred(hedgedBy(policy, List.<Supplier<Mono<String>>>of(() -> null))))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(250))
        .expectNext("primary")
        .expectComplete()
        .verify(VERIFY);
  }

  @Test
  void aSubscriberThatCancelsFromOnNextStopsTheWinningStream() {
    HedgePolicy policy = policy();
    PublisherProbe<Long> stream = PublisherProbe.of(Flux.interval(Duration.ofMillis(10)));
    StepVerifier.withVirtualTime(() -> stream.flux().transformDeferred(hedgedBy(policy)).take(1))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(10))
        .expectNext(0L)
        .expectComplete()
        .verify(VERIFY);
    stream.assertWasCancelled();
  }

  @Test
  void aSourceThatSignalsAfterItEndedIsIgnored() {
    HedgePolicy policy = policy();
    TestPublisher<String> source = TestPublisher.createNoncompliant(TestPublisher.Violation.CLEANUP_ON_TERMINATE);
    StepVerifier.create(source.flux().transformDeferred(hedgedBy(policy)))
        .then(() -> source.next("a").complete().next("late").error(new IllegalStateException("late")))
        .expectNext("a")
        .expectComplete()
        .verifyThenAssertThat()
        .hasDropped("late")
        .hasDroppedErrorWithMessage("late");
  }

  @Test
  void aDeadlineThatExpiresCancelsEveryAttemptAndTheTimer() {
    HedgePolicy policy = policy();
    ScriptedDependency search = ScriptedDependency.answering(Duration.ofSeconds(30));
    StepVerifier.withVirtualTime(() -> search.call()
            .transformDeferred(hedgedBy(policy))
            .transformDeferred(withDeadline(Duration.ofSeconds(1))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(1))
        .expectError(DeadlineExceededException.class)
        .verify(VERIFY);
    assertThat(search.startedAtMillis).containsExactly(0L, 100L, 200L);
    search.probes.forEach(PublisherProbe::assertWasCancelled);
  }

  @Test
  void aHugeDeadlineDoesNotOverflowTheHedgeSchedule() {
    HedgePolicy policy = policy();
    ScriptedDependency search = ScriptedDependency.answering(Duration.ofSeconds(30), Duration.ofMillis(10));
    StepVerifier.withVirtualTime(() -> search.call()
            .transformDeferred(hedgedBy(policy))
            .transformDeferred(withDeadline(Duration.ofDays(36_500))))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(110))
        .expectNext("a1")
        .expectComplete()
        .verify(VERIFY);
  }

  @Test
  void anErrorAMonoSendsAfterItsWinningValueIsDroppedAndTheCallCompletes() {
    HedgePolicy policy = policy();
    IllegalStateException late = new IllegalStateException("after the value");
    Mono<String> primary = new Mono<>() {   // breaks the protocol: a value, then an error
      @Override
      public void subscribe(CoreSubscriber<? super String> actual) {
        actual.onSubscribe(Operators.emptySubscription());
        actual.onNext("answer");
        actual.onError(late);
      }
    };
    StepVerifier.create(primary.transformDeferred(hedgedBy(policy)))
        .expectNext("answer")
        .expectComplete()
        .verifyThenAssertThat(VERIFY)
        .hasDroppedErrorsSatisfying(dropped -> assertThat(dropped).containsExactly(late));
  }

  @Test
  void aWinningStreamThatSendsMoreThanWasRequestedIsCancelledAndTheCallFailsWithAnOverflowAfterWhatWasHeld() {
    HedgePolicy policy = policy();
    TestPublisher<String> stream = TestPublisher.createNoncompliant(TestPublisher.Violation.REQUEST_OVERFLOW);
    StepVerifier.create(stream.flux().transformDeferred(hedgedBy(policy)), 0)
        .expectSubscription()
        .then(() -> stream.next("first", "unrequested"))   // the attempt had asked for one item
        .thenRequest(5)
        .expectNext("first")
        .expectErrorSatisfies(e -> assertThat(Exceptions.isOverflow(e)).as("overflow: %s", e).isTrue())
        .verifyThenAssertThat(VERIFY)
        .hasDiscarded("unrequested");
    stream.assertCancelled();
  }
}
