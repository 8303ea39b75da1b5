package io.breakwater.deadline;

import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.streamTimeouts;
import static io.breakwater.Breakwater.withDeadline;
import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.TaskBudget;
import io.breakwater.stream.StreamTimeouts;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * "No deadline, really": {@code ChronoUnit.FOREVER.getDuration()} ({@code Long.MAX_VALUE} seconds) and other budgets
 * beyond the 292 years a long of nanoseconds holds saturate, as the deadline's expiry always did, instead of failing
 * the subscription (or the assembly) with {@code ArithmeticException}.
 */
class DeadlineHostileDurationsTest {

  private static final Duration FOREVER = ChronoUnit.FOREVER.getDuration();

  @Test
  void aTaskDeadlineOfForeverLetsTheCallEndAsItWouldWithoutOne() {
    StepVerifier.withVirtualTime(() -> Mono.delay(Duration.ofDays(1000)).transformDeferred(withDeadline(FOREVER)))
        .thenAwait(Duration.ofDays(1000))
        .expectNext(0L)
        .verifyComplete();
    StepVerifier.withVirtualTime(() -> Mono.deferContextual(ctx -> Mono.just(Deadline.from(ctx).orElseThrow()))
            .transformDeferred(withDeadline(DeadlineSpec.of(FOREVER))))
        .assertNext(d -> {
          assertThat(d.budget()).as("saturated at 292 years").isEqualTo(Duration.ofNanos(Long.MAX_VALUE));
          assertThat(d.expiresAtNanos()).isEqualTo(Long.MAX_VALUE);
          assertThat(d.isExpired()).isFalse();
        })
        .verifyComplete();
  }

  @Test
  void aPerCallTimeoutOfForeverAloneOrUnderATaskDeadlineTakesTheDeadlinesPerCallShare() {
    StepVerifier.withVirtualTime(() -> Mono.delay(Duration.ofHours(1)).transformDeferred(perCallTimeout(FOREVER)))
        .thenAwait(Duration.ofHours(1))
        .expectNext(0L)
        .verifyComplete();
    StepVerifier.withVirtualTime(() -> Mono.never().transformDeferred(perCallTimeout(FOREVER))
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(6))
        .expectError(CallTimeoutException.class)
        .verify(Duration.ofSeconds(5));   // min(forever, 0.6 × 10 s)
  }

  @Test
  void capsOfForeverLeaveTheFractionsToDecide() {
    DeadlineSpec spec = DeadlineSpec.builder(Duration.ofSeconds(10)).perCallCap(FOREVER).idleCap(FOREVER).build();
    StepVerifier.withVirtualTime(() -> Mono.never().transformDeferred(perCallTimeout())
            .transformDeferred(withDeadline(spec)))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(5_999))
        .thenAwait(Duration.ofMillis(1))
        .expectError(CallTimeoutException.class)
        .verify(Duration.ofSeconds(5));   // the per-call share, 0.6 × 10 s
    StepVerifier.withVirtualTime(() -> Flux.never().transformDeferred(streamTimeouts(
                StreamTimeouts.builder().idleFromDeadline().build()))
            .transformDeferred(withDeadline(spec)))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(1_799))
        .thenAwait(Duration.ofMillis(1))
        .expectError()
        .verify(Duration.ofSeconds(5));   // the idle share, 0.3 × 6 s
  }

  @Test
  void aTaskBudgetOfForeverIsATaskWithoutATimeLimit() {
    StepVerifier.withVirtualTime(() -> Mono.delay(Duration.ofDays(1000))
            .transformDeferred(withTaskBudget(TaskBudget.builder(FOREVER).build())))
        .thenAwait(Duration.ofDays(1000))
        .expectNext(0L)
        .verifyComplete();
  }
}
