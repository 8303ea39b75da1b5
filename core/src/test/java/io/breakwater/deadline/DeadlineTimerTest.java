package io.breakwater.deadline;

import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.internal.deadline.TimerWheel;
import io.breakwater.testing.DelegatingScheduler;
import io.breakwater.testing.TaskCountingScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.retry.Retry;

/**
 * How deadlines use timers: one per call, whatever the number of deadlines in force on it, each firing at its exact
 * instant in virtual time, none left once calls end.
 */
class DeadlineTimerTest {

  private static DeadlineSpec on(TaskCountingScheduler clock, Duration budget) {
    return DeadlineSpec.builder(budget).scheduler(() -> clock).build();
  }

  @Test
  void aCallWithADeadlineAndAPerCallBudgetHasOnePendingTimer() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    AtomicInteger attempts = new AtomicInteger();
    List<Throwable> errors = new ArrayList<>();

    Disposable call = Mono.never()
        .doOnSubscribe(s -> attempts.incrementAndGet())
        .transformDeferred(perCallTimeout())
        .retry(1)
        .transformDeferred(withDeadline(on(clock, Duration.ofSeconds(10))))
        .subscribe(v -> { }, errors::add);
    assertThat(clock.pendingTasks()).as("timers pending for the deadline and the per-call budget").isEqualTo(1);

    virtual.advanceTimeBy(Duration.ofSeconds(6));   // the per-call budget passes: the call is retried
    assertThat(attempts).hasValue(2);
    assertThat(errors).isEmpty();
    assertThat(clock.pendingTasks()).as("timers pending for the second attempt").isEqualTo(1);

    call.dispose();
    virtual.advanceTimeBy(Duration.ofSeconds(4));   // an emptied slot keeps its task until its instant (TimerWheel)
    assertThat(errors).isEmpty();
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void theTimerDecidesWhenItFiresWhichDeadlinePassed() {
    // 10 s task, 2 s between attempts: attempt 1 gets 6 s and times out as a call (at 6 s); attempt 2 starts at 8 s
    // with 2 s left, gets 1.2 s and times out as a call (at 9.2 s); the task's own deadline passes during the next
    // wait, at 10 s. One timer served all three.
    List<String> timeouts = new ArrayList<>();
    StepVerifier.withVirtualTime(() -> Mono.never()
            .transformDeferred(perCallTimeout())
            .doOnError(e -> timeouts.add(e.getMessage()))
            .retryWhen(Retry.fixedDelay(5, Duration.ofSeconds(2)))
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(10).minusNanos(1))
        .then(() -> assertThat(timeouts).containsExactly(
            "A call timed out after running 6s (its per-call time limit: 6s)",
            "A call timed out after running 1.2s (its per-call time limit: 1.2s)"))
        .thenAwait(Duration.ofNanos(1))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(DeadlineExceededException.class)
            .hasMessage("Deadline 'deadline' exceeded: 10s of 10s used"))
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void callsInFlightFireEachAtItsOwnInstant() {
    // Many calls whose instants are close (several to a slot of the wheel), armed in random order, some equal, half
    // of them cancelled: each remaining one fails at exactly its budget, and the cancelled ones never do.
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    Random random = new Random(20);
    int calls = 2_000;
    long[] budgetNanos = new long[calls];
    long[] failedAt = new long[calls];
    List<Disposable> subscriptions = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      budgetNanos[i] = 1 + random.nextInt(5) * 7_000_000L + random.nextInt(3_000) * 97_000L;
      int call = i;
      subscriptions.add(Mono.never()
          .transformDeferred(withDeadline(on(clock, Duration.ofNanos(budgetNanos[i]))))
          .subscribe(v -> { }, e -> failedAt[call] = virtual.now(TimeUnit.NANOSECONDS)));
    }
    for (int i = 0; i < calls; i += 2) {
      subscriptions.get(i).dispose();
    }

    virtual.advanceTimeBy(Duration.ofSeconds(1));

    for (int i = 0; i < calls; i++) {
      assertThat(failedAt[i]).as("call %d, budget %d ns", i, budgetNanos[i]).isEqualTo(i % 2 == 0 ? 0 : budgetNanos[i]);
    }
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void aDeadlineArmedWhileTimersFireFiresOnTime() {
    // The first call's error handler starts a second call whose deadline falls in the slot that is firing.
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    AtomicLong secondFailedAt = new AtomicLong(-1);
    Mono.never()
        .transformDeferred(withDeadline(on(clock, Duration.ofMillis(10))))
        .subscribe(v -> { }, e -> Mono.never()
            .transformDeferred(withDeadline(on(clock, Duration.ofMillis(1))))
            .subscribe(w -> { }, f -> secondFailedAt.set(virtual.now(TimeUnit.MILLISECONDS))));

    virtual.advanceTimeBy(Duration.ofMillis(10));
    assertThat(secondFailedAt).hasValue(-1);
    virtual.advanceTimeBy(Duration.ofMillis(1));
    assertThat(secondFailedAt).hasValue(11);
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void aPerCallTimeoutBesideAnotherInAFlatMapKeepsItsOwnInstant() {
    // Only one nested deadline shares the task's timer at a time; the others file their own, and each still fires
    // at its own instant.
    StepVerifier.withVirtualTime(() -> Flux.range(1, 3)
            .flatMap(i -> Mono.never()
                .transformDeferred(perCallTimeout(Duration.ofSeconds(i)))
                .onErrorResume(CallTimeoutException.class, e -> Mono.just(i)))
            .transformDeferred(withDeadline(Duration.ofSeconds(30))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(1))
        .expectNext(1)
        .expectNoEvent(Duration.ofSeconds(1))
        .expectNext(2)
        .expectNoEvent(Duration.ofSeconds(1))
        .expectNext(3)
        .verifyComplete();
  }

  @Test
  void aBudgetTooLargeToAddNeverFiresAndLeavesNoTimerOnceCancelled() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    virtual.advanceTimeBy(Duration.ofDays(1));
    List<Throwable> errors = new ArrayList<>();

    Disposable call = Mono.never()
        .transformDeferred(withDeadline(on(clock, Duration.ofNanos(Long.MAX_VALUE - 1))))
        .subscribe(v -> { }, errors::add);
    Disposable nearlyAsLarge = Mono.never()
        .transformDeferred(withDeadline(on(clock, Duration.ofDays(100 * 365))))
        .subscribe(v -> { }, errors::add);
    virtual.advanceTimeBy(Duration.ofDays(1_000));

    assertThat(errors).isEmpty();
    call.dispose();
    nearlyAsLarge.dispose();
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void aRetriedAttemptSharesTheCallsTimerOnceTheAttemptBeforeItFailedAndTimesOutAtItsOwnInstant() {
    // Attempt 1 (per-call budget 6 s) fails after 1 s; attempt 2 gets 0.6 x 9 s = 5.4 s, until 6.4 s. It waits on
    // the call's one timer, still filed for 6 s (a nested deadline that ends leaves it there), which then moves on.
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    AtomicInteger attempts = new AtomicInteger();
    List<Throwable> errors = new ArrayList<>();
    AtomicLong failedAt = new AtomicLong(-1);
    Mono.defer(() -> attempts.incrementAndGet() == 1
            ? Mono.delay(Duration.ofSeconds(1), virtual).then(Mono.error(new IllegalStateException("refused")))
            : Mono.never())
        .transformDeferred(perCallTimeout())
        .retry(1)
        .transformDeferred(withDeadline(on(clock, Duration.ofSeconds(10))))
        .subscribe(v -> { }, e -> {
          errors.add(e);
          failedAt.set(virtual.now(TimeUnit.MILLISECONDS));
        });

    virtual.advanceTimeBy(Duration.ofSeconds(1));
    assertThat(attempts).hasValue(2);
    assertThat(clock.pendingTasks()).as("timers pending for the second attempt and the deadline").isEqualTo(1);

    virtual.advanceTimeBy(Duration.ofMillis(5_400).minusNanos(1));
    assertThat(errors).isEmpty();
    virtual.advanceTimeBy(Duration.ofNanos(1));
    assertThat(errors).singleElement().isInstanceOf(CallTimeoutException.class);
    assertThat(failedAt).hasValue(6_400);
  }

  @Test
  void aCallWithABudgetBeyondTheKeepHorizonLeavesNoTaskOnceItEnds() {
    // Such a timer's slot does not keep its task: a call that completes or fails disposes it at once.
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    Duration far = Duration.ofNanos(TimerWheel.KEEP_HORIZON + 1);

    Sinks.Many<Integer> items = Sinks.many().unicast().onBackpressureBuffer();
    List<Object> signals = new ArrayList<>();
    items.asFlux().transformDeferred(withDeadline(on(clock, far))).subscribe(signals::add, signals::add,
        () -> signals.add("complete"));
    assertThat(clock.pendingTasks()).isEqualTo(1);
    items.tryEmitNext(1);
    items.tryEmitComplete();
    assertThat(signals).containsExactly(1, "complete");
    assertThat(clock.pendingTasks()).as("tasks left once the Flux completed").isZero();

    Sinks.One<Integer> answer = Sinks.one();
    answer.asMono().transformDeferred(withDeadline(on(clock, far))).subscribe(signals::add, signals::add);
    assertThat(clock.pendingTasks()).isEqualTo(1);
    answer.tryEmitError(new IllegalStateException("refused"));
    assertThat(clock.pendingTasks()).as("tasks left once the Mono failed").isZero();
  }

  @Test
  void aCancelledCallWithABudgetOfExactlyTheKeepHorizonLeavesItsSlotsTaskForTheCallsThatFollow() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    Disposable call = Mono.never()
        .transformDeferred(withDeadline(on(clock, Duration.ofNanos(TimerWheel.KEEP_HORIZON))))
        .subscribe();
    call.dispose();
    assertThat(clock.pendingTasks()).as("kept: the budget is not beyond the horizon").isEqualTo(1);
    virtual.advanceTimeBy(Duration.ofNanos(TimerWheel.KEEP_HORIZON));
    assertThat(clock.pendingTasks()).as("gone at its instant").isZero();
  }

  @Test
  void aPerCallBudgetUnderADeadlineTooLargeToAddIsTimedFromTheCallsStart() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    virtual.advanceTimeBy(Duration.ofDays(1));
    List<Throwable> errors = new ArrayList<>();
    Mono.never()
        .transformDeferred(perCallTimeout(Duration.ofSeconds(1)))
        .transformDeferred(withDeadline(on(clock, Duration.ofNanos(Long.MAX_VALUE - 1))))
        .subscribe(v -> { }, errors::add);

    virtual.advanceTimeBy(Duration.ofSeconds(1).minusNanos(1));
    assertThat(errors).isEmpty();
    virtual.advanceTimeBy(Duration.ofNanos(1));
    assertThat(errors).singleElement().isInstanceOf(CallTimeoutException.class);
  }

  @Test
  void aPerCallBudgetSubscribedInsideItsDeadlinesSubscriptionStartsAtTheDeadlinesInstant() {
    // On a clock that moves between two reads, as a real one does, the first attempt still gets 0.6 of the whole
    // budget: it starts at the instant the deadline started, not at a later reading.
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    Scheduler moving = new DelegatingScheduler(virtual) {
      @Override
      public long now(TimeUnit unit) {
        virtual.advanceTimeBy(Duration.ofMillis(1));
        return virtual.now(unit);
      }
    };
    Duration[] seen = new Duration[1];
    Mono.deferContextual(ctx -> Mono.just(Deadline.from(ctx).orElseThrow().budget()))
        .transformDeferred(perCallTimeout())
        .transformDeferred(withDeadline(DeadlineSpec.builder(Duration.ofSeconds(10)).scheduler(() -> moving).build()))
        .subscribe(budget -> seen[0] = budget);
    assertThat(seen[0]).isEqualTo(Duration.ofSeconds(6));
  }
}
