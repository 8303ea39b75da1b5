package io.breakwater.breaker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.testing.LateScheduler;
import io.breakwater.testing.TaskCountingScheduler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/** Issue 19, problem 1: how late our own timers fire, measured in virtual time with a scheduler that runs late. */
class SchedulerLagTest {

  final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
  final LateScheduler late = new LateScheduler(clock);
  final TaskCountingScheduler counted = new TaskCountingScheduler(late);

  SchedulerLag probe() {
    return SchedulerLag.builder().scheduler(() -> counted).interval(Duration.ofMillis(100))
        .threshold(Duration.ofMillis(100)).hold(Duration.ofSeconds(5)).start();
  }

  @Test
  void timersOnTimeAreNoOverload() {
    SchedulerLag lag = probe();
    clock.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(lag.overloaded()).isFalse();
    assertThat(lag.lag()).isZero();
    assertThat(counted.scheduledTasks()).as("one timer per interval").isEqualTo(101);
    assertThat(counted.pendingTasks()).isEqualTo(1);
    lag.dispose();
  }

  @Test
  void timersFiringLateAreOverloadForTheHoldAfterTheyStop() {
    SchedulerLag lag = probe();
    clock.advanceTimeBy(Duration.ofSeconds(1));
    late.lag(Duration.ofMillis(300));
    clock.advanceTimeBy(Duration.ofSeconds(2));
    assertThat(lag.overloaded()).isTrue();
    assertThat(lag.lag()).isEqualTo(Duration.ofMillis(300));

    late.lag(Duration.ZERO);
    clock.advanceTimeBy(Duration.ofSeconds(4));
    assertThat(lag.overloaded()).as("within the hold of the last late timer").isTrue();
    clock.advanceTimeBy(Duration.ofSeconds(2));
    assertThat(lag.overloaded()).isFalse();
    lag.dispose();
  }

  @Test
  void aTimerOverdueNowIsOverloadBeforeItFires() {
    SchedulerLag lag = probe();
    late.lag(Duration.ofSeconds(10));   // the next timer is armed now and runs 10 s late: the scheduler is starved
    clock.advanceTimeBy(Duration.ofMillis(100));   // the timer armed at 0 fires, on time, and arms a late one
    assertThat(lag.overloaded()).isFalse();
    clock.advanceTimeBy(Duration.ofMillis(199));
    assertThat(lag.overloaded()).as("99 ms overdue").isFalse();
    clock.advanceTimeBy(Duration.ofMillis(1));
    assertThat(lag.overloaded()).as("100 ms overdue, not fired yet").isTrue();
    assertThat(lag.lag()).isEqualTo(Duration.ofMillis(100));
    lag.dispose();
  }

  @Test
  void disposingCancelsTheTimerAndEndsTheVerdict() {
    SchedulerLag lag = probe();
    late.lag(Duration.ofSeconds(1));
    clock.advanceTimeBy(Duration.ofSeconds(3));
    assertThat(lag.overloaded()).isTrue();
    lag.dispose();
    assertThat(lag.isDisposed()).isTrue();
    assertThat(lag.overloaded()).isFalse();
    assertThat(counted.pendingTasks()).as("no timer left behind").isZero();
    int scheduled = counted.scheduledTasks();
    clock.advanceTimeBy(Duration.ofMinutes(1));
    assertThat(counted.scheduledTasks()).isEqualTo(scheduled);
  }

  @Test
  void theLagIsAGaugeWhenAsked() {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    SchedulerLag lag = SchedulerLag.builder().scheduler(() -> late).meterRegistry(meters, "io").start();
    late.lag(Duration.ofMillis(250));
    clock.advanceTimeBy(Duration.ofSeconds(1));
    assertThat(meters.get("breakwater.scheduler.lag").tag("scheduler", "io").gauge().value()).isEqualTo(0.25);
    lag.dispose();
  }

  @Test
  void settingsAreValidatedAndHugeOnesSaturate() {
    assertThatThrownBy(() -> SchedulerLag.builder().interval(Duration.ZERO).start())
        .hasMessageContaining("interval is PT0S: give a positive duration");
    assertThatThrownBy(() -> SchedulerLag.builder().threshold(Duration.ofMillis(-1)).start())
        .hasMessageContaining("threshold");
    assertThatThrownBy(() -> SchedulerLag.builder().hold(Duration.ofMillis(-1)).start())
        .hasMessageContaining("hold");
    SchedulerLag huge = SchedulerLag.builder().scheduler(() -> clock).interval(Duration.ofSeconds(Long.MAX_VALUE))
        .threshold(Duration.ofSeconds(Long.MAX_VALUE)).hold(Duration.ofSeconds(Long.MAX_VALUE)).start();
    clock.advanceTimeBy(Duration.ofDays(365));
    assertThat(huge.overloaded()).isFalse();
    huge.dispose();
  }
}
