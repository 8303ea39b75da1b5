package io.breakwater.deadline;

import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

class DeadlineBudgetsTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

  private Deadline start(DeadlineSpec.Builder spec) {
    return Deadline.start(spec.scheduler(() -> clock).build(), clock);
  }

  @Test
  void perCallIsSixTenthsOfRemainingAndIdleIsThreeTenthsOfPerCall() {
    Deadline deadline = start(DeadlineSpec.builder(Duration.ofSeconds(10)));

    assertThat(deadline.perCallBudget()).isEqualTo(Duration.ofSeconds(6));
    assertThat(deadline.idleBudget()).isEqualTo(Duration.ofMillis(1800));
  }

  @Test
  void perCallIsCappedAtTwelveSecondsAndIdleAtThree() {
    Deadline deadline = start(DeadlineSpec.builder(Duration.ofSeconds(60)));

    assertThat(deadline.perCallBudget()).isEqualTo(Duration.ofSeconds(12));
    assertThat(deadline.idleBudget()).isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void budgetsShrinkAsTimePasses() {
    Deadline deadline = start(DeadlineSpec.builder(Duration.ofSeconds(10)));
    clock.advanceTimeBy(Duration.ofSeconds(5));

    assertThat(deadline.remaining()).isEqualTo(Duration.ofSeconds(5));
    assertThat(deadline.elapsed()).isEqualTo(Duration.ofSeconds(5));
    assertThat(deadline.perCallBudget()).isEqualTo(Duration.ofSeconds(3));
    assertThat(deadline.idleBudget()).isEqualTo(Duration.ofMillis(900));
  }

  @Test
  void budgetsAreZeroOnceExpiredAndRemainingNeverNegative() {
    Deadline deadline = start(DeadlineSpec.builder(Duration.ofSeconds(1)));
    clock.advanceTimeBy(Duration.ofSeconds(3));

    assertThat(deadline.isExpired()).isTrue();
    assertThat(deadline.remaining()).isEqualTo(Duration.ZERO);
    assertThat(deadline.remainingNanos()).isEqualTo(-Duration.ofSeconds(2).toNanos());
    assertThat(deadline.perCallBudget()).isEqualTo(Duration.ZERO);
    assertThat(deadline.idleBudget()).isEqualTo(Duration.ZERO);
  }

  @Test
  void fractionsAndCapsAreConfigurable() {
    Deadline deadline = start(DeadlineSpec.builder(Duration.ofSeconds(10))
        .perCallFraction(0.5).perCallCap(Duration.ofSeconds(4))
        .idleFraction(0.25).idleCap(Duration.ofMillis(500)));

    assertThat(deadline.perCallBudget()).isEqualTo(Duration.ofSeconds(4));
    assertThat(deadline.idleBudget()).isEqualTo(Duration.ofMillis(500));
  }

  @Test
  void budgetsFollowTheDeadlineInForceInTheContext() {
    StepVerifier.withVirtualTime(() -> Mono.deferContextual(ctx -> Mono.just(
                Deadline.from(ctx).orElseThrow().perCallBudget()))
            .delaySubscription(Duration.ofSeconds(5))
            .transformDeferred(withDeadline(Duration.ofSeconds(15))))
        .thenAwait(Duration.ofSeconds(5))
        .expectNext(Duration.ofSeconds(6))
        .verifyComplete();
  }

  @Test
  void hugeBudgetDoesNotOverflow() {
    Deadline deadline = start(DeadlineSpec.builder(Duration.ofDays(365 * 200)));

    assertThat(deadline.isExpired()).isFalse();
    assertThat(deadline.perCallBudget()).isEqualTo(Duration.ofSeconds(12));
  }

  @Test
  void aCallStartedAtAGivenInstantExpiresItsBudgetAfterItAndCountsTimeUsedFromIt() {
    clock.advanceTimeBy(Duration.ofSeconds(2));
    long started = clock.now(TimeUnit.NANOSECONDS) - Duration.ofSeconds(1).toNanos();
    Deadline call = Deadline.startCall("lookup", Duration.ofSeconds(3), DeadlineSpec.of(Duration.ZERO), clock, started);

    assertThat(call.expiresAtNanos()).isEqualTo(started + Duration.ofSeconds(3).toNanos());
    assertThat(call.elapsed()).isEqualTo(Duration.ofSeconds(1));
    assertThat(call.remaining()).isEqualTo(Duration.ofSeconds(2));
    assertThat(Deadline.startCall("far", Duration.ofNanos(Long.MAX_VALUE), DeadlineSpec.of(Duration.ZERO), clock,
        started).expiresAtNanos()).as("saturates").isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void invalidSpecsAreRejectedWithWhatToChange() {
    assertThatIllegalArgumentException().isThrownBy(() -> DeadlineSpec.of(Duration.ofSeconds(-1)))
        .withMessageContaining("give a positive budget, or Duration.ZERO");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> DeadlineSpec.builder(Duration.ofSeconds(1)).perCallFraction(1.5).build())
        .withMessageContaining("perCallFraction is 1.5")
        .withMessageContaining("greater than 0 and at most 1");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> DeadlineSpec.builder(Duration.ofSeconds(1)).idleFraction(0).build())
        .withMessageContaining("idleFraction is 0.0");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> DeadlineSpec.builder(Duration.ofSeconds(1)).idleCap(Duration.ZERO).build())
        .withMessageContaining("idleCap is PT0S: give a positive duration");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> DeadlineSpec.builder(Duration.ofSeconds(1)).name(" ").build())
        .withMessageContaining("name it after the task");
  }
}
