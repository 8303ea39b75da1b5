package io.breakwater.breaker;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.breaker.Calls.counting;
import static io.breakwater.breaker.Calls.fail;
import static io.breakwater.breaker.Calls.failTimes;
import static io.breakwater.breaker.Calls.on;
import static io.breakwater.breaker.Calls.outcome;
import static io.breakwater.breaker.Calls.succeed;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker.State;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.Retryability;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.publisher.PublisherProbe;
import reactor.test.scheduler.VirtualTimeScheduler;

class CircuitBreakerTransitionsTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

  private CircuitBreaker breaker(int minimumCalls) {
    return on(clock, "search").minimumCalls(minimumCalls).failureRateThreshold(0.5)
        .openDuration(Duration.ofSeconds(30)).build();
  }

  private CircuitBreaker opened() {
    CircuitBreaker b = breaker(2);
    failTimes(b, 2);
    assertThat(b.state()).isEqualTo(State.OPEN);
    return b;
  }

  private CircuitBreaker halfOpened() {
    CircuitBreaker b = opened();
    clock.advanceTimeBy(Duration.ofSeconds(30));
    assertThat(b.state()).isEqualTo(State.HALF_OPEN);
    return b;
  }

  @Test
  void staysClosedUntilTheMinimumNumberOfCallsIsSeen() {
    CircuitBreaker b = breaker(10);
    failTimes(b, 9);
    assertThat(b.state()).isEqualTo(State.CLOSED);
    fail(b);
    assertThat(b.state()).isEqualTo(State.OPEN);
  }

  @Test
  void opensWhenTheFailureRateReachesTheThreshold() {
    CircuitBreaker b = breaker(4);
    succeed(b);
    succeed(b);
    succeed(b);
    fail(b);
    fail(b);
    assertThat(b.state()).as("2 of 5 failed: 40%").isEqualTo(State.CLOSED);
    fail(b);
    assertThat(b.state()).as("3 of 6 failed: 50%").isEqualTo(State.OPEN);
  }

  @Test
  void openRejectsFastWithoutSubscribingUpstream() {
    CircuitBreaker b = opened();
    clock.advanceTimeBy(Duration.ofSeconds(10));
    PublisherProbe<String> upstream = PublisherProbe.of(Mono.just("never called"));

    StepVerifier.create(upstream.mono().transformDeferred(guardedBy(b)))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(CircuitBreakerOpenException.class)
              .hasMessage("Circuit breaker 'search' is OPEN: calls rejected for 20s more, then 1 probe is let "
                  + "through");
          CircuitBreakerOpenException open = (CircuitBreakerOpenException) e;
          assertThat(open.source()).isEqualTo("search");
          assertThat(open.state()).isEqualTo(State.OPEN);
          assertThat(open.untilProbe()).isEqualTo(Duration.ofSeconds(20));
          assertThat(open.failureKind()).isEqualTo(FailureKind.CIRCUIT_OPEN);
          assertThat(open.failureKind().retryability()).isEqualTo(Retryability.NON_RETRYABLE);
          assertThat(open.getStackTrace()).isEmpty();
        })
        .verify(Duration.ofSeconds(5));
    upstream.assertWasNotSubscribed();
  }

  /** Issue 26: the rejection said "one probe" whatever {@code halfOpenProbes} was. */
  @Test
  void theRejectionSaysHowManyProbesWillBeLetThrough() {
    CircuitBreaker b = on(clock, "search").minimumCalls(2).halfOpenProbes(3).openDuration(Duration.ofSeconds(30))
        .build();
    failTimes(b, 2);
    assertThat(Calls.succeed(b)).hasMessage("Circuit breaker 'search' is OPEN: calls rejected for 30s more, then 3 "
        + "probes are let through");
  }

  @Test
  void openMovesToHalfOpenExactlyAfterTheOpenDuration() {
    CircuitBreaker b = opened();
    clock.advanceTimeBy(Duration.ofSeconds(30).minusNanos(1));
    assertThat(b.state()).isEqualTo(State.OPEN);
    clock.advanceTimeBy(Duration.ofNanos(1));
    assertThat(b.state()).isEqualTo(State.HALF_OPEN);
  }

  @Test
  void firstCallAfterTheOpenDurationIsTheProbe() {
    CircuitBreaker b = opened();
    clock.advanceTimeBy(Duration.ofSeconds(30));
    assertThat(succeed(b)).isNull();
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void successfulProbeCloses() {
    CircuitBreaker b = halfOpened();
    assertThat(succeed(b)).isNull();
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void failedProbeReopensForAnotherOpenDuration() {
    CircuitBreaker b = halfOpened();
    assertThat(fail(b)).isNotInstanceOf(CircuitBreakerOpenException.class);
    assertThat(b.state()).isEqualTo(State.OPEN);
    clock.advanceTimeBy(Duration.ofSeconds(30).minusNanos(1));
    assertThat(b.state()).isEqualTo(State.OPEN);
    clock.advanceTimeBy(Duration.ofNanos(1));
    assertThat(b.state()).isEqualTo(State.HALF_OPEN);
  }

  @Test
  void halfOpenRejectsOtherCallsWhileTheProbeIsInFlight() {
    CircuitBreaker b = halfOpened();
    AtomicInteger subscriptions = new AtomicInteger();
    Disposable probe = counting(subscriptions, Mono.never()).transformDeferred(guardedBy(b)).subscribe();

    Throwable second = outcome(b, counting(subscriptions, Mono.just("x")));

    assertThat(subscriptions).hasValue(1);
    assertThat(second).isInstanceOfSatisfying(CircuitBreakerOpenException.class, e -> {
      assertThat(e.state()).isEqualTo(State.HALF_OPEN);
      assertThat(e.untilProbe()).isZero();
    });
    probe.dispose();
  }

  @Test
  void aCallRejectedWhileProbesAreInFlightIsToldHowManyAndUntilWhen() {
    CircuitBreaker one = halfOpened();
    Disposable probe = Mono.never().transformDeferred(guardedBy(one)).subscribe();
    assertThat(outcome(one, Mono.just("x"))).hasMessageContaining(
        "1 probe is in flight; other calls are rejected until it ends");
    probe.dispose();

    CircuitBreaker two = on(clock, "search").minimumCalls(2).halfOpenProbes(2).build();
    failTimes(two, 2);
    clock.advanceTimeBy(two.openDuration());
    Disposable first = Mono.never().transformDeferred(guardedBy(two)).subscribe();
    Disposable second = Mono.never().transformDeferred(guardedBy(two)).subscribe();
    assertThat(outcome(two, Mono.just("x"))).hasMessageContaining(
        "2 probes are in flight; other calls are rejected until they end");
    first.dispose();
    second.dispose();
  }

  @Test
  void failuresOlderThanTheSlidingWindowNoLongerCount() {
    CircuitBreaker b = on(clock, "search").minimumCalls(2).failureRateThreshold(0.5)
        .slidingWindow(Duration.ofSeconds(10)).build();
    fail(b);
    clock.advanceTimeBy(Duration.ofSeconds(11));
    fail(b);
    assertThat(b.state()).as("one call in the window, below the minimum").isEqualTo(State.CLOSED);
    fail(b);
    assertThat(b.state()).isEqualTo(State.OPEN);
  }

  @Test
  void allProbesMustSucceedToClose() {
    CircuitBreaker b = on(clock, "search").minimumCalls(2).halfOpenProbes(3).build();
    failTimes(b, 2);
    clock.advanceTimeBy(b.openDuration());
    succeed(b);
    succeed(b);
    assertThat(b.state()).isEqualTo(State.HALF_OPEN);
    succeed(b);
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void cancelledProbeFreesItsPermit() {
    CircuitBreaker b = halfOpened();
    AtomicInteger subscriptions = new AtomicInteger();
    Disposable probe = counting(subscriptions, Mono.never()).transformDeferred(guardedBy(b)).subscribe();
    assertThat(outcome(b, Mono.just("x"))).as("permit held").isInstanceOf(CircuitBreakerOpenException.class);

    probe.dispose();

    assertThat(b.state()).isEqualTo(State.HALF_OPEN);
    assertThat(outcome(b, counting(subscriptions, Mono.just("x")))).as("the next caller probes").isNull();
    assertThat(subscriptions).hasValue(2);
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void cancellationIsNotAFailure() {
    CircuitBreaker b = breaker(2);
    for (int i = 0; i < 100; i++) {
      Mono.never().transformDeferred(guardedBy(b)).subscribe().dispose();
    }
    fail(b);
    assertThat(b.state()).as("one failure, cancellations ignored").isEqualTo(State.CLOSED);
  }

  @Test
  void openDurationGrowsWhileTheBreakerKeepsReopening() {
    CircuitBreaker b = on(clock, "search").minimumCalls(2).openDuration(Duration.ofSeconds(30))
        .openDurationGrowth(2.0, Duration.ofSeconds(100)).build();
    List<StateTransition> transitions = new CopyOnWriteArrayList<>();
    b.transitions().subscribe(transitions::add);
    failTimes(b, 2);
    for (Duration expected : List.of(Duration.ofSeconds(60), Duration.ofSeconds(100), Duration.ofSeconds(100))) {
      clock.advanceTimeBy(transitions.get(transitions.size() - 1).openDuration());
      fail(b); // the probe fails
      assertThat(transitions.get(transitions.size() - 1).openDuration()).isEqualTo(expected);
    }
    clock.advanceTimeBy(Duration.ofSeconds(100));
    succeed(b);
    failTimes(b, 2);
    assertThat(transitions.get(transitions.size() - 1).openDuration()).as("reset by a full close")
        .isEqualTo(Duration.ofSeconds(30));
  }

  private static List<StateTransition> watch(CircuitBreaker b) {
    List<StateTransition> transitions = new CopyOnWriteArrayList<>();
    b.transitions().subscribe(transitions::add);
    return transitions;
  }

  /** "FROM->TO@second" for each transition. */
  private static List<String> dated(List<StateTransition> transitions) {
    return transitions.stream().map(t -> t.from() + "->" + t.to() + "@" + t.at().getEpochSecond()).toList();
  }

  /** A stream's outcome is recorded when it ends (not at its first element): a probe closes the breaker then. */
  @Test
  void aStreamProbeClosesTheBreakerWhenItEndsNotAtItsFirstElement() {
    CircuitBreaker b = halfOpened();
    List<StateTransition> transitions = watch(b);
    StepVerifier.create(Flux.interval(Duration.ofSeconds(1), clock).take(3).transformDeferred(guardedBy(b)))
        .then(() -> clock.advanceTimeBy(Duration.ofSeconds(3)))
        .expectNextCount(3)
        .verifyComplete();
    assertThat(dated(transitions)).containsExactly("HALF_OPEN->CLOSED@33");
  }

  /** A stream cancelled after its first element is a success, recorded when it was cancelled. */
  @Test
  void aStreamProbeCancelledAfterItsFirstElementClosesTheBreakerWhenCancelled() {
    CircuitBreaker b = halfOpened();
    List<StateTransition> transitions = watch(b);
    StepVerifier.create(Flux.interval(Duration.ofSeconds(1), clock).transformDeferred(guardedBy(b)))
        .then(() -> clock.advanceTimeBy(Duration.ofSeconds(3)))
        .expectNextCount(3)
        .thenCancel()
        .verify();
    assertThat(dated(transitions)).containsExactly("HALF_OPEN->CLOSED@33");
  }

  /**
   * A Mono's value is its end: {@code flatMap} and {@code subscribe(value -> ..)} start what follows it before the
   * source's {@code onComplete}. A probe that answered has closed the breaker by then, so the chain's next call runs.
   */
  @Test
  void aMonoProbeClosesTheBreakerWithItsValueSoTheNextCallOfAChainRuns() {
    CircuitBreaker b = halfOpened();
    reactor.test.publisher.TestPublisher<String> probe = reactor.test.publisher.TestPublisher.create();
    List<Object> seen = new CopyOnWriteArrayList<>();
    probe.mono().transformDeferred(guardedBy(b))
        .flatMap(v -> {
          seen.add(b.state());
          return Mono.just("next").transformDeferred(guardedBy(b));
        })
        .subscribe(seen::add, seen::add);
    probe.next("probe");
    assertThat(seen).containsExactly(State.CLOSED, "next");
    probe.complete();
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }

  /** A Mono that completes empty has its outcome recorded when it completes. */
  @Test
  void anEmptyMonoProbeClosesTheBreakerWhenItCompletes() {
    CircuitBreaker b = halfOpened();
    List<StateTransition> transitions = watch(b);
    StepVerifier.create(Mono.delay(Duration.ofSeconds(2), clock).then().transformDeferred(guardedBy(b)))
        .then(() -> clock.advanceTimeBy(Duration.ofSeconds(2)))
        .verifyComplete();
    assertThat(dated(transitions)).containsExactly("HALF_OPEN->CLOSED@32");
  }

  /** docs/breaker.md: OPEN moves to HALF_OPEN on the next call or state() read; the read emits it like a call. */
  @Test
  void readingTheStateAfterTheOpenDurationHalfOpensAndEmitsTheTransition() {
    CircuitBreaker b = opened();
    List<StateTransition> transitions = new CopyOnWriteArrayList<>();
    b.transitions().subscribe(transitions::add);
    clock.advanceTimeBy(Duration.ofSeconds(30));
    assertThat(b.state()).isEqualTo(State.HALF_OPEN);
    assertThat(succeed(b)).as("the probe").isNull();
    assertThat(transitions).extracting(t -> t.from() + "->" + t.to())
        .containsExactly("OPEN->HALF_OPEN", "HALF_OPEN->CLOSED");
  }

  /**
   * docs/breaker.md: a collapse while still ramping up counts as reopening and grows the open duration; a collapse
   * recorded at the very instant the ramp ends, or after, opens for the base duration.
   */
  @Test
  void aCollapseWhileRampingUpReopensForAGrownDurationButNotOnceTheRampHasEnded() {
    CircuitBreaker b = on(clock, "search").minimumCalls(2).openDuration(Duration.ofSeconds(30))
        .openDurationGrowth(2.0, Duration.ofMinutes(5)).rampUp(Duration.ofSeconds(10), 0.1).build();
    List<StateTransition> transitions = new CopyOnWriteArrayList<>();
    b.transitions().subscribe(transitions::add);
    failTimes(b, 2);
    clock.advanceTimeBy(Duration.ofSeconds(30));
    assertThat(succeed(b)).as("the probe closes it: ramping up from 30 s to 40 s").isNull();
    clock.advanceTimeBy(Duration.ofSeconds(5));
    for (int i = 0; i < 100 && b.state() == State.CLOSED; i++) {
      fail(b);   // the admitted fraction of these fails
    }
    assertThat(transitions.get(transitions.size() - 1).openDuration()).as("collapsed at 35 s, while ramping up")
        .isEqualTo(Duration.ofSeconds(60));

    clock.advanceTimeBy(Duration.ofSeconds(60));
    assertThat(succeed(b)).as("the probe closes it: ramping up from 95 s to 105 s").isNull();
    clock.advanceTimeBy(Duration.ofSeconds(5));
    for (int admitted = 0; admitted < 2; ) {   // two calls admitted at 100 s that fail at 105 s, as the ramp ends
      AtomicInteger subscribed = new AtomicInteger();
      counting(subscribed, Mono.delay(Duration.ofSeconds(5), clock).then(Mono.error(
          new io.breakwater.failure.HttpStatusException(503)))).transformDeferred(guardedBy(b))
          .subscribe(v -> { }, e -> { });
      admitted += subscribed.get();
    }
    clock.advanceTimeBy(Duration.ofSeconds(5));
    assertThat(b.state()).isEqualTo(State.OPEN);
    assertThat(transitions.get(transitions.size() - 1).openDuration()).as("collapsed as the ramp ended")
        .isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void transitionsAreEmittedInOrderWithTheirTimes() {
    CircuitBreaker b = breaker(2);
    List<StateTransition> transitions = new CopyOnWriteArrayList<>();
    b.transitions().subscribe(transitions::add);
    clock.advanceTimeBy(Duration.ofSeconds(1));
    failTimes(b, 2);
    clock.advanceTimeBy(Duration.ofSeconds(30));
    fail(b);
    clock.advanceTimeBy(Duration.ofSeconds(30));
    succeed(b);

    assertThat(transitions).extracting(t -> t.from() + "->" + t.to()).containsExactly(
        "CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED");
    assertThat(transitions).extracting(t -> t.at().getEpochSecond()).containsExactly(1L, 31L, 31L, 61L, 61L);
    assertThat(transitions.get(0).openDuration()).isEqualTo(Duration.ofSeconds(30));
    assertThat(transitions).allSatisfy(t -> assertThat(t.breaker()).isEqualTo("search"));
  }
}
