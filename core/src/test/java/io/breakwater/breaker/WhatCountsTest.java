package io.breakwater.breaker;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.breaker.Calls.call;
import static io.breakwater.breaker.Calls.on;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker.State;
import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

class WhatCountsTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

  private CircuitBreaker breaker() {
    return on(clock, "tool").minimumCalls(5).failureRateThreshold(0.5).build();
  }

  private static void callTimes(CircuitBreaker b, Throwable error, int times) {
    for (int i = 0; i < times; i++) {
      call(b, error);
    }
  }

  @Test
  void clientErrorsNeverOpenTheBreaker() {
    CircuitBreaker b = breaker();
    for (Throwable clientError : List.of(new HttpStatusException(400), new HttpStatusException(401),
        new HttpStatusException(404), new HttpStatusException(422), new IllegalArgumentException("bad city"))) {
      callTimes(b, clientError, 100);
    }
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void theTasksOwnDeadlineAndInnerBreakersNeverOpenIt() {
    CircuitBreaker b = breaker();
    callTimes(b, new DeadlineExceededException("task", Duration.ofSeconds(1), Duration.ofSeconds(1)), 50);
    callTimes(b, CircuitBreakerOpenException.open("inner", Duration.ofSeconds(1)), 50);
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void timeoutsServerErrorsAndConnectErrorsOpenIt() {
    for (Throwable failure : List.of(new TimeoutException(), new HttpStatusException(502),
        new ConnectException("refused"), new CallTimeoutException("call", Duration.ofSeconds(1),
            Duration.ofSeconds(1)))) {
      CircuitBreaker b = breaker();
      callTimes(b, failure, 5);
      assertThat(b.state()).as(failure.toString()).isEqualTo(State.OPEN);
    }
  }

  @Test
  void rateLimitingCountsOnlyWhenConfigured() {
    CircuitBreaker byDefault = breaker();
    callTimes(byDefault, new HttpStatusException(429), 20);
    assertThat(byDefault.state()).isEqualTo(State.CLOSED);

    CircuitBreaker counting = on(clock, "tool").minimumCalls(5).countRateLimited(true).build();
    callTimes(counting, new HttpStatusException(429), 5);
    assertThat(counting.state()).isEqualTo(State.OPEN);
  }

  @Test
  void unknownFailuresCountUnlessTurnedOff() {
    CircuitBreaker byDefault = breaker();
    callTimes(byDefault, new IllegalStateException("?"), 5);
    assertThat(byDefault.state()).isEqualTo(State.OPEN);

    CircuitBreaker notCounting = on(clock, "tool").minimumCalls(5).countUnknown(false).build();
    callTimes(notCounting, new IllegalStateException("?"), 20);
    assertThat(notCounting.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void aCustomClassifierDecidesTheKind() {
    class QuotaExceeded extends RuntimeException {}
    CircuitBreaker b = on(clock, "tool").minimumCalls(5)
        .classifier(FailureClassifier.of(QuotaExceeded.class, FailureKind.BUSINESS)
            .orElse(FailureClassifier.defaults()))
        .build();
    callTimes(b, new QuotaExceeded(), 20);
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void ignoredFailuresStillReachTheSubscriber() {
    CircuitBreaker b = breaker();
    assertThat(call(b, new HttpStatusException(404))).isInstanceOf(HttpStatusException.class);
  }

  @Test
  void slowCallsOpenTheBreaker() {
    CircuitBreaker b = on(clock, "tool").minimumCalls(2).slowCall(Duration.ofSeconds(1), 0.5).build();
    for (int i = 0; i < 2; i++) {
      StepVerifier.create(Mono.delay(Duration.ofSeconds(2), clock).transformDeferred(guardedBy(b)))
          .then(() -> clock.advanceTimeBy(Duration.ofSeconds(2)))
          .expectNext(0L)
          .expectComplete()
          .verify(Duration.ofSeconds(5));
    }
    assertThat(b.state()).isEqualTo(State.OPEN);
  }

  @Test
  void aSlowFailureCountsTowardsTheSlowCallRate() {
    // One fast success, one failure after 2 s: 50 % failures (under the 100 % threshold), 50 % slow (at it).
    CircuitBreaker b = on(clock, "tool").minimumCalls(2).failureRateThreshold(1.0)
        .slowCall(Duration.ofSeconds(1), 0.5).build();
    Calls.succeed(b);
    StepVerifier.create(Mono.delay(Duration.ofSeconds(2), clock).then(Mono.error(new HttpStatusException(503)))
            .transformDeferred(guardedBy(b)))
        .then(() -> clock.advanceTimeBy(Duration.ofSeconds(2)))
        .expectError(HttpStatusException.class)
        .verify(Duration.ofSeconds(5));
    assertThat(b.state()).isEqualTo(State.OPEN);
  }

  /** CircuitBreaker.Builder.slowCall: a call whose first element takes at least the threshold is slow. */
  @Test
  void aCallWhoseAnswerTakesExactlyTheSlowCallThresholdIsSlow() {
    CircuitBreaker b = on(clock, "tool").minimumCalls(2).slowCall(Duration.ofSeconds(1), 1.0).build();
    clock.advanceTimeBy(Duration.ofMinutes(1));
    for (int i = 0; i < 2; i++) {
      StepVerifier.create(Mono.delay(Duration.ofSeconds(1), clock).transformDeferred(guardedBy(b)))
          .then(() -> clock.advanceTimeBy(Duration.ofSeconds(1)))
          .expectNext(0L)
          .verifyComplete();
    }
    assertThat(b.state()).as("both calls were slow").isEqualTo(State.OPEN);
  }

  /** The slow-call rate is slow calls over all calls in the window: one slow call of four is 25 %, under 50 %. */
  @Test
  void aWindowWhoseShareOfSlowCallsIsUnderTheRateStaysClosed() {
    CircuitBreaker b = on(clock, "tool").minimumCalls(2).slowCall(Duration.ofSeconds(1), 0.5).build();
    clock.advanceTimeBy(Duration.ofMinutes(1));
    for (int i = 0; i < 3; i++) {
      Calls.succeed(b);
    }
    StepVerifier.create(Mono.delay(Duration.ofSeconds(2), clock).transformDeferred(guardedBy(b)))
        .then(() -> clock.advanceTimeBy(Duration.ofSeconds(2)))
        .expectNext(0L)
        .verifyComplete();
    assertThat(b.snapshot().slowCalls()).isEqualTo(1);
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void aCallThatEndsDuringSubscriptionIsNeverSlow() {
    CircuitBreaker b = on(clock, "cache").minimumCalls(2).slowCall(Duration.ofSeconds(1), 0.5).build();
    for (int i = 0; i < 5; i++) {
      Calls.outcome(b, Mono.fromSupplier(() -> {
        clock.advanceTimeBy(Duration.ofSeconds(2)); // time passes, but synchronously: no I/O was awaited
        return "cached";
      }));
    }
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void aLongStreamIsJudgedByItsFirstElementNotItsDuration() {
    CircuitBreaker b = on(clock, "llm").minimumCalls(2).slowCall(Duration.ofSeconds(1), 0.5).build();
    for (int i = 0; i < 5; i++) {
      // first token after 100 ms, then a token a second for a minute
      StepVerifier.create(Flux.interval(Duration.ofMillis(100), Duration.ofSeconds(1), clock)
                  .take(60).transformDeferred(guardedBy(b)))
          .then(() -> clock.advanceTimeBy(Duration.ofMinutes(2)))
          .expectNextCount(60)
          .verifyComplete();
    }
    assertThat(b.state()).isEqualTo(State.CLOSED);

    for (int i = 0; i < 2; i++) {
      // first token after 3 s
      StepVerifier.create(Flux.interval(Duration.ofSeconds(3), Duration.ofMillis(10), clock)
                  .take(3).transformDeferred(guardedBy(b)))
          .then(() -> clock.advanceTimeBy(Duration.ofSeconds(4)))
          .expectNextCount(3)
          .verifyComplete();
    }
    assertThat(b.state()).isEqualTo(State.OPEN);
  }

  @Test
  void aStreamThatFailsAfterItsFirstElementStillCountsAsAFailure() {
    CircuitBreaker b = breaker();
    for (int i = 0; i < 5; i++) {
      StepVerifier.create(Flux.just("a", "b").concatWith(Mono.error(new HttpStatusException(503)))
              .transformDeferred(guardedBy(b)))
          .expectNext("a", "b")
          .expectError(HttpStatusException.class)
          .verify(Duration.ofSeconds(5));
    }
    assertThat(b.state()).isEqualTo(State.OPEN);
  }

  @Test
  void aStreamCancelledAfterItsFirstElementIsASuccess() {
    CircuitBreaker b = on(clock, "llm").minimumCalls(2).build();
    Calls.failTimes(b, 2);
    clock.advanceTimeBy(b.openDuration());
    StepVerifier.create(Flux.just("a", "b", "c").concatWith(Flux.never()).transformDeferred(guardedBy(b)).take(2))
        .expectNext("a", "b")
        .verifyComplete();
    assertThat(b.state()).as("the probe took 2 tokens and was cancelled: a success").isEqualTo(State.CLOSED);
  }

  /** A per-call timeout whose timer fired {@code late} after its 500 ms budget. */
  private static CallTimeoutException timedOut(Duration late) {
    return new CallTimeoutException("call", Duration.ofMillis(500), Duration.ofMillis(500).plus(late));
  }

  @Test
  void aTimeoutWhoseOwnTimerFiredLateIsOurStarvationNotTheDependencysFailure() {
    CircuitBreaker b = breaker();   // no SchedulerLag probe: the defaults
    callTimes(b, timedOut(Duration.ofMillis(400)), 50);
    assertThat(b.state()).as("50 timeouts whose timers fired 400 ms late").isEqualTo(State.CLOSED);
    assertThat(b.snapshot().failedCalls()).isZero();

    callTimes(b, timedOut(Duration.ofMillis(20)), 5);   // a timer-wheel tick late: on time
    assertThat(b.state()).as("within the hold of the late ones").isEqualTo(State.CLOSED);
    clock.advanceTimeBy(Duration.ofSeconds(6));
    callTimes(b, timedOut(Duration.ofMillis(20)), 5);
    assertThat(b.state()).as("timeouts on time, after the hold, are the dependency's").isEqualTo(State.OPEN);
  }

  @Test
  void aLateTimerMakesTimeoutsOnTimeWithinTheHoldOursButNotOtherFailures() {
    CircuitBreaker b = breaker();
    call(b, timedOut(Duration.ofSeconds(2)));
    clock.advanceTimeBy(Duration.ofSeconds(5));
    callTimes(b, timedOut(Duration.ZERO), 10);
    assertThat(b.state()).as("on time, 5 s after a late timer").isEqualTo(State.CLOSED);
    callTimes(b, new HttpStatusException(503), 5);
    assertThat(b.state()).as("503s count whatever the timers do").isEqualTo(State.OPEN);
  }

  @Test
  void aMonoStaysAMonoAndAFluxAFlux() {
    CircuitBreaker b = breaker();
    assertThat(Mono.just(1).transform(guardedBy(b))).isInstanceOf(Mono.class);
    assertThat(Flux.just(1).transform(guardedBy(b))).isInstanceOf(Flux.class);
  }
}
