package io.breakwater.hedge;

import static io.breakwater.Breakwater.hedgedBy;
import static io.breakwater.hedge.HedgedByTest.VERIFY;
import static io.breakwater.hedge.HedgedByTest.fill;
import static io.breakwater.hedge.ScriptedDependency.answering;
import static io.breakwater.hedge.ScriptedDependency.failure;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.HttpStatusException;
import io.breakwater.testing.TaskCountingScheduler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The hedge timer's scheduler task, as docs/hedging.md ("cost", "cancellation") and docs/deadline.md ("Timers", "When
 * nothing is left") describe it: a call's timer is filed in a timer wheel, whose slot keeps its task when the call
 * ends, except for a timer armed more than 2³⁸ ns (about 4.6 minutes) ahead, which disposes the task of the slot it
 * leaves empty at once. A hedge delay of five minutes is such a timer: every way a call can end (its answer, its last
 * failure, the caller's cancellation) must leave the scheduler without a task at that very moment.
 */
class HedgeTimerTest {

  /** Longer than the wheel's keep horizon (2³⁸ ns, about 274.9 s). */
  static final Duration LONG_DELAY = Duration.ofMinutes(5);
  /** The keep horizon itself: a timer armed this far ahead is still "near". */
  static final Duration KEEP_HORIZON = Duration.ofNanos(1L << 38);

  final VirtualTimeScheduler vts = VirtualTimeScheduler.create();
  final TaskCountingScheduler timers = new TaskCountingScheduler(vts);

  HedgePolicy policy(Duration delay) {
    HedgePolicy policy = HedgePolicy.builder().name("timer").delay(delay).budget(1.0)
        .scheduler(() -> timers).meterRegistry(new SimpleMeterRegistry()).build();
    fill(policy, 1);
    return policy;
  }

  @Test
  void aCallThatAnswersBeforeALongDelayDisposesItsTimerTaskWithTheAnswer() {
    HedgePolicy policy = policy(LONG_DELAY);
    ScriptedDependency dependency = answering(Duration.ofMillis(60));
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)), () -> vts, 1)
        .expectSubscription()
        .then(() -> assertThat(timers.pendingTasks()).as("the hedge timer is armed").isEqualTo(1))
        .expectNoEvent(Duration.ofMillis(60))
        .expectNext("a0")
        .then(() -> assertThat(timers.pendingTasks()).as("its task is gone with the answer, not five minutes later")
            .isZero())
        .expectComplete()
        .verify(VERIFY);
  }

  @Test
  void aCallWhoseOnlyAttemptFailsBeforeALongDelayDisposesItsTimerTaskWithTheFailure() {
    HedgePolicy policy = policy(LONG_DELAY);
    ScriptedDependency dependency = new ScriptedDependency(n -> failure(new HttpStatusException(503),
        Duration.ofMillis(50)));
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)), () -> vts, 1)
        .expectSubscription()
        .then(() -> assertThat(timers.pendingTasks()).as("the hedge timer is armed").isEqualTo(1))
        .expectNoEvent(Duration.ofMillis(50))
        .expectErrorSatisfies(e -> assertThat(timers.pendingTasks()).as("its task is gone with the failure").isZero())
        .verify(VERIFY);
  }

  @Test
  void cancellingACallBeforeALongDelayDisposesItsTimerTaskAtOnce() {
    HedgePolicy policy = policy(LONG_DELAY);
    ScriptedDependency dependency = answering(Duration.ofHours(1));
    AtomicReference<Subscription> call = new AtomicReference<>();
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)), () -> vts, 1)
        .consumeSubscriptionWith(call::set)
        .expectNoEvent(Duration.ofSeconds(1))
        .then(() -> assertThat(timers.pendingTasks()).as("the hedge timer is armed").isEqualTo(1))
        .then(() -> call.get().cancel())
        .then(() -> assertThat(timers.pendingTasks()).as("its task is gone with the cancellation").isZero())
        .thenCancel()
        .verify(VERIFY);
    dependency.probe(0).assertWasCancelled();
  }

  @Test
  void aCallAnsweredByItsHedgeBeforeTheSecondLongDelayDisposesTheReArmedTimerTask() {
    HedgePolicy policy = HedgePolicy.builder().name("timer").delay(LONG_DELAY).budget(1.0).maxHedges(2)
        .scheduler(() -> timers).meterRegistry(new SimpleMeterRegistry()).build();
    fill(policy, 2);
    ScriptedDependency dependency = answering(Duration.ofHours(1), Duration.ofSeconds(1));
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)), () -> vts, 1)
        .expectSubscription()
        .expectNoEvent(LONG_DELAY)
        .then(() -> assertThat(timers.pendingTasks()).as("the timer is armed again for the second hedge")
            .isEqualTo(1))
        .expectNoEvent(Duration.ofSeconds(1))
        .expectNext("a1")
        .then(() -> assertThat(timers.pendingTasks()).as("the second hedge's task is gone with the answer").isZero())
        .expectComplete()
        .verify(VERIFY);
    assertThat(dependency.startedAtMillis).containsExactly(0L, LONG_DELAY.toMillis());
  }

  @Test
  void aTimerArmedForExactlyTheKeepHorizonLeavesItsSlotsTaskUntilItsInstant() {
    HedgePolicy policy = policy(KEEP_HORIZON);
    ScriptedDependency dependency = answering(Duration.ofMillis(60));
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)), () -> vts, 1)
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(60))
        .expectNext("a0")
        .then(() -> assertThat(timers.pendingTasks()).as("a near timer's slot keeps its task for the timers filed next")
            .isEqualTo(1))
        .thenAwait(KEEP_HORIZON)
        .then(() -> assertThat(timers.pendingTasks()).as("which runs at its instant, finds nothing due, and is gone")
            .isZero())
        .expectComplete()
        .verify(VERIFY);
    assertThat(dependency.calls).as("and starts no hedge").hasValue(1);
  }
}
