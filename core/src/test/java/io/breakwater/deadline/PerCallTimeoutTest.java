package io.breakwater.deadline;

import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.breakwater.failure.FailureKind;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class PerCallTimeoutTest {

  private static final Mono<Object> STALL = Mono.never();

  @Test
  void callGetsSixTenthsOfTheRemainingTaskTime() {
    StepVerifier.withVirtualTime(() -> STALL
            .transformDeferred(perCallTimeout())
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(6).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(CallTimeoutException.class)
              .hasMessage("A call timed out after running 6s (its per-call time limit: 6s)");
          assertThat(((CallTimeoutException) e).failureKind()).isEqualTo(FailureKind.TIMEOUT);
        })
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void callIsCappedAtTwelveSeconds() {
    StepVerifier.withVirtualTime(() -> STALL
            .transformDeferred(perCallTimeout())
            .transformDeferred(withDeadline(Duration.ofMinutes(5))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(12).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectError(CallTimeoutException.class)
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void withoutATaskDeadlineTheMaxApplies() {
    StepVerifier.withVirtualTime(() -> STALL.transformDeferred(perCallTimeout(Duration.ofSeconds(2))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(2).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectError(CallTimeoutException.class)
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void eachAttemptGetsABudgetFromTheTimeThenRemaining() {
    // 10 s task: attempt 1 gets 6 s and times out; attempt 2 starts with 4 s left and gets 2.4 s.
    StepVerifier.withVirtualTime(() -> STALL
            .transformDeferred(perCallTimeout())
            .retry(1)
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(6))
        .expectNoEvent(Duration.ofMillis(2400).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectErrorSatisfies(e -> assertThat(((CallTimeoutException) e).budget()).isEqualTo(Duration.ofMillis(2400)))
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void upstreamSeesTheCallsDeadlineNotTheTasks() {
    StepVerifier.withVirtualTime(() -> Mono.deferContextual(ctx -> Mono.just(Deadline.from(ctx).orElseThrow()))
            .transformDeferred(perCallTimeout())
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .assertNext(deadline -> {
          assertThat(deadline.isCall()).isTrue();
          assertThat(deadline.remaining()).isEqualTo(Duration.ofSeconds(6));
          assertThat(deadline.perCallBudget()).as("a call's own budget is all of its remaining time")
              .isEqualTo(Duration.ofSeconds(6));
          assertThat(deadline.idleBudget()).isEqualTo(Duration.ofMillis(1800));
        })
        .verifyComplete();
  }

  @Test
  void expiredTaskDeadlineStopsTheCallBeforeItIsMade() {
    StepVerifier.withVirtualTime(() -> Mono.delay(Duration.ofSeconds(3))
            .then(STALL.transformDeferred(perCallTimeout()))
            .transformDeferred(withDeadline(Duration.ofSeconds(3))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(3))
        .expectError(DeadlineExceededException.class)
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void nonPositiveMaxIsRejected() {
    assertThatIllegalArgumentException().isThrownBy(() -> perCallTimeout(Duration.ZERO))
        .withMessage("perCallTimeout max is PT0S: give a positive duration");
  }
}
