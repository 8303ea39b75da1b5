package io.breakwater.internal.deadline;

import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.testing.DelegatingScheduler;
import io.breakwater.testing.TaskCountingScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;

class TimerWheelTest {

  @Test
  void tenThousandCallsWithADeadlineAndAPerCallBudgetHoldOneTimerEach() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    DeadlineSpec spec = DeadlineSpec.builder(Duration.ofSeconds(10)).scheduler(() -> clock).build();
    List<Disposable> calls = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      calls.add(Mono.never()
          .transformDeferred(perCallTimeout())
          .transformDeferred(withDeadline(spec))
          .subscribe());
    }

    assertThat(TimerWheel.of(clock).filed()).as("timers filed").isEqualTo(10_000);
    assertThat(clock.pendingTasks()).as("tasks on the scheduler: one per slot in use").isEqualTo(1);

    calls.forEach(Disposable::dispose);
    assertThat(TimerWheel.of(clock).filed()).isZero();
    assertThat(clock.pendingTasks()).as("the emptied slot keeps its task until its instant").isEqualTo(1);
    virtual.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(clock.pendingTasks()).as("tasks left once the instant has passed").isZero();
  }

  @Test
  void anEmptiedSlotKeepsItsTaskForTheNextTimerWhichFiresAtItsOwnInstantAndNothingIsLeftAfterIt() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    long start = clock.now(TimeUnit.NANOSECONDS);
    long first = start + TimeUnit.SECONDS.toNanos(5);
    long second = first + TimeUnit.MILLISECONDS.toNanos(1);   // the same slot, later
    List<Long> firedAt = new ArrayList<>();
    Fires cancelled = new Fires(() -> firedAt.add(-1L));
    Fires kept = new Fires(() -> firedAt.add(clock.now(TimeUnit.NANOSECONDS)));

    TimerWheel.of(clock).file(cancelled, first, clock);
    TimerWheel.of(clock).release(cancelled, true);
    assertThat(clock.pendingTasks()).as("the emptied slot keeps its task").isEqualTo(1);
    TimerWheel.of(clock).file(kept, second, clock);
    assertThat(clock.scheduledTasks()).as("the next timer rides on the kept task").isEqualTo(1);

    virtual.advanceTimeBy(Duration.ofNanos(first - start));
    assertThat(firedAt).as("nothing fires at the kept task's instant").isEmpty();
    assertThat(clock.pendingTasks()).as("the task is filed again for the timer left").isEqualTo(1);
    virtual.advanceTimeBy(Duration.ofNanos(second - first - 1));
    assertThat(firedAt).as("nothing fires early").isEmpty();
    virtual.advanceTimeBy(Duration.ofNanos(1));
    assertThat(firedAt).as("fired at its exact instant").containsExactly(second);
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void aKeptTaskThatFindsNothingDueLeavesNoTaskAfterItsInstant() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    long at = clock.now(TimeUnit.NANOSECONDS) + TimeUnit.SECONDS.toNanos(2);
    List<Fires> timers = new ArrayList<>();
    AtomicInteger fired = new AtomicInteger();
    for (int i = 0; i < 100; i++) {
      Fires t = new Fires(fired::incrementAndGet);
      timers.add(t);
      TimerWheel.of(clock).file(t, at + i, clock);
    }
    timers.forEach(t -> TimerWheel.of(clock).release(t, true));
    assertThat(clock.pendingTasks()).isEqualTo(1);

    virtual.advanceTimeBy(Duration.ofNanos(TimeUnit.SECONDS.toNanos(2) - 1));
    assertThat(clock.pendingTasks()).as("kept until its instant").isEqualTo(1);
    virtual.advanceTimeBy(Duration.ofNanos(1));
    assertThat(clock.pendingTasks()).as("gone at its instant").isZero();
    virtual.advanceTimeBy(Duration.ofSeconds(30));
    assertThat(fired).as("no cancelled timer ever fires").hasValue(0);
  }

  @Test
  void timersFiledForEarlierInstantsOfAnEmptiedSlotLeaveItOneTask() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    long start = slotStartAfter(clock.now(TimeUnit.NANOSECONDS));
    TimerWheel wheel = TimerWheel.of(clock);
    for (long budgetMillis : new long[] {15, 10, 5}) {   // one slot, each instant earlier than the last
      Fires ended = new Fires(() -> { });
      wheel.file(ended, start + TimeUnit.MILLISECONDS.toNanos(budgetMillis), clock);
      wheel.release(ended, true);
    }
    assertThat(clock.pendingTasks()).as("tasks on the scheduler for the emptied slot").isEqualTo(1);
    virtual.advanceTimeBy(Duration.ofNanos(start - clock.now(TimeUnit.NANOSECONDS) + 20_000_000));
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void threeEndedCallsWithNearlyEqualBudgetsLeaveOneTask() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    for (long budgetMillis : new long[] {1_000, 995, 990}) {
      DeadlineSpec spec = DeadlineSpec.builder(Duration.ofMillis(budgetMillis)).scheduler(() -> clock).build();
      Mono.never().transformDeferred(withDeadline(spec)).subscribe().dispose();
    }
    assertThat(clock.pendingTasks()).as("tasks on the scheduler once the calls ended").isEqualTo(1);
  }

  @Test
  void aFarTimerDisposesTheTaskOfTheSlotItLeavesEmpty() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    Fires far = new Fires(() -> { });
    TimerWheel.of(clock).file(far, clock.now(TimeUnit.NANOSECONDS) + TimerWheel.KEEP_HORIZON + 1, clock);
    assertThat(clock.pendingTasks()).isEqualTo(1);
    TimerWheel.of(clock).release(far, false);
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void cancellationsRacingTheKeptTasksFireEveryOtherTimerOnceAndLeaveNoTask() throws InterruptedException {
    Scheduler timers = Schedulers.newParallel("timer-wheel-keep-race", 2);
    TaskCountingScheduler clock = new TaskCountingScheduler(timers);
    try {
      int rounds = 20_000;
      AtomicInteger[] fires = new AtomicInteger[rounds];
      for (int i = 0; i < rounds; i++) {
        AtomicInteger count = new AtomicInteger();
        fires[i] = count;
        Fires t = new Fires(count::incrementAndGet);
        // instants within 0.2 ms: cancellations race slot tasks that are running, kept, or filed again
        long at = clock.now(TimeUnit.NANOSECONDS) + ThreadLocalRandom.current().nextLong(200_000);
        TimerWheel.of(clock).file(t, at, clock);
        if (i % 2 == 0) {
          TimerWheel.of(clock).release(t, true);
        }
      }
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (clock.pendingTasks() != 0 && System.nanoTime() < until) {
        Thread.sleep(5);
      }
      Thread.sleep(5);   // a slot's task may still be firing what it took out
      assertThat(clock.pendingTasks()).as("tasks left once every instant has passed").isZero();
      for (int i = 0; i < rounds; i++) {
        assertThat(fires[i].get()).as("fires of timer %d", i).isLessThanOrEqualTo(1);
        if (i % 2 == 1) {
          assertThat(fires[i].get()).as("timer %d, not cancelled, fired", i).isEqualTo(1);
        }
      }
    } finally {
      timers.dispose();
    }
  }

  @Test
  void aThreadKeepsAWheelPerSchedulerAndForgetsTheLeastRecentlyUsed() {
    List<Scheduler> schedulers = new ArrayList<>();
    for (int i = 0; i <= TimerWheel.WHEELS_PER_THREAD; i++) {
      schedulers.add(VirtualTimeScheduler.create());
    }
    TimerWheel first = TimerWheel.of(schedulers.get(0));
    assertThat(TimerWheel.of(schedulers.get(0))).isSameAs(first);
    for (Scheduler s : schedulers.subList(1, TimerWheel.WHEELS_PER_THREAD)) {
      TimerWheel.of(s);
    }
    assertThat(TimerWheel.of(schedulers.get(0))).as("still kept").isSameAs(first);
    for (Scheduler s : schedulers.subList(1, schedulers.size())) {
      TimerWheel.of(s);
    }
    assertThat(TimerWheel.of(schedulers.get(0))).as("dropped, made again").isNotSameAs(first);
  }

  @Test
  void aTimerThatThrowsDoesNotKeepTheOthersOfItsSlotFromFiring() throws InterruptedException {
    Scheduler single = Schedulers.newSingle("timer-wheel-test");
    try {
      TimerWheel wheel = TimerWheel.of(single);
      long at = single.now(TimeUnit.NANOSECONDS) + TimeUnit.MILLISECONDS.toNanos(20);
      CountDownLatch fired = new CountDownLatch(2);
      List<Fires> timers = List.of(new Fires(fired::countDown), new Fires(() -> {
        throw new IllegalStateException("a handler that throws");
      }), new Fires(fired::countDown));
      for (TimerWheel.Timer<?> timer : timers) {
        wheel.file(timer, at, single);
      }
      assertThat(fired.await(10, TimeUnit.SECONDS)).isTrue();
    } finally {
      single.dispose();
    }
  }

  private static final int RUNNING = 0;
  private static final int ENDED = 1;
  private static final int DISPOSING = 2;
  private static final int DISPOSED = 3;

  @Test
  void racingCompletionsCancellationsAndFiringsEndEveryCallOnceAndLeaveNoTask() throws InterruptedException {
    Scheduler timers = Schedulers.newParallel("timer-wheel-race", 2);
    Scheduler completer = Schedulers.newSingle("completer");
    TaskCountingScheduler clock = new TaskCountingScheduler(timers);
    try {
      int calls = 3_000;
      CountDownLatch ended = new CountDownLatch(calls);
      AtomicInteger twice = new AtomicInteger();
      AtomicInteger values = new AtomicInteger();
      AtomicInteger timeouts = new AtomicInteger();
      AtomicReference<Throwable> unexpected = new AtomicReference<>();
      List<Disposable> subscriptions = new ArrayList<>();
      for (int i = 0; i < calls; i++) {
        Sinks.One<Integer> answer = Sinks.one();
        DeadlineSpec spec = DeadlineSpec.builder(Duration.ofMillis(2 + i % 4)).scheduler(() -> clock).build();
        // RUNNING -> ENDED by its signal, or RUNNING -> DISPOSING -> DISPOSED by the canceller. A signal racing the
        // canceller is legitimate (it may even reach the consumer after dispose() returned, having claimed the
        // subscriber first); a second signal after the call ended by one is too many.
        AtomicInteger phase = new AtomicInteger(RUNNING);
        Runnable end = () -> {
          if (phase.compareAndSet(RUNNING, ENDED)) {
            ended.countDown();
          } else if (phase.get() == ENDED) {
            twice.incrementAndGet();   // a second terminal signal
          }
        };
        subscriptions.add(answer.asMono()
            .transformDeferred(perCallTimeout())
            .retry(2)
            .transformDeferred(withDeadline(spec))
            .subscribe(v -> {
              values.incrementAndGet();
              end.run();
            }, e -> {
              if (e instanceof DeadlineExceededException || e instanceof CallTimeoutException) {
                timeouts.incrementAndGet();
              } else {
                unexpected.set(e);
              }
              end.run();
            }));
        long delayMicros = ThreadLocalRandom.current().nextLong(4_000);
        if (i % 7 == 0) {
          Disposable call = subscriptions.get(i);
          completer.schedule(() -> {
            if (phase.compareAndSet(RUNNING, DISPOSING)) {
              call.dispose();
              phase.set(DISPOSED);   // from now on a signal is one too many
              ended.countDown();
            }
          }, delayMicros, TimeUnit.MICROSECONDS);
        } else {
          completer.schedule(() -> answer.tryEmitValue(1), delayMicros, TimeUnit.MICROSECONDS);
        }
      }

      assertThat(ended.await(30, TimeUnit.SECONDS)).as("every call ended").isTrue();
      Thread.sleep(20);   // let late signals arrive
      assertThat(unexpected.get()).isNull();
      assertThat(twice).as("calls signalled twice").hasValue(0);
      assertThat(values.get() + timeouts.get()).isLessThanOrEqualTo(calls);
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (clock.pendingTasks() != 0 && System.nanoTime() < until) {
        Thread.sleep(5);   // a slot's task may still be running on a timer thread
      }
      assertThat(clock.pendingTasks()).as("tasks left on the scheduler").isZero();
    } finally {
      completer.dispose();
      timers.dispose();
    }
  }

  @Test
  void aTimerFiledForAnEarlierInstantInItsSlotMovesTheSlotsOneTaskThere() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    long start = slotStartAfter(clock.now(TimeUnit.NANOSECONDS) + TimeUnit.SECONDS.toNanos(1));
    long later = start + TimeUnit.MILLISECONDS.toNanos(10);
    long earlier = start + TimeUnit.MILLISECONDS.toNanos(5);
    List<Long> firedAt = new ArrayList<>();
    TimerWheel wheel = TimerWheel.of(clock);
    wheel.file(new Fires(() -> firedAt.add(clock.now(TimeUnit.NANOSECONDS))), later, clock);
    wheel.file(new Fires(() -> firedAt.add(clock.now(TimeUnit.NANOSECONDS))), earlier, clock);
    assertThat(clock.pendingTasks()).as("one task per slot, at its earliest instant").isEqualTo(1);

    virtual.advanceTimeBy(Duration.ofNanos(later - clock.now(TimeUnit.NANOSECONDS)));
    assertThat(firedAt).containsExactly(earlier, later);
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void timersLeftInASlotWhoseNextTaskWasRefusedForAWhileFireOnceTheWheelFilesAgain() {
    // The slot's task fires the first timer and asks for its next task, which a bounded scheduler at its capacity
    // refuses; the scheduler is not disposed, so the timer left waits for the wheel's next filing, in any slot.
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    AtomicInteger schedules = new AtomicInteger();
    Scheduler bounded = new DelegatingScheduler(virtual) {
      @Override
      public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        if (schedules.incrementAndGet() == 2) {
          throw new RejectedExecutionException("queue full");
        }
        return super.schedule(task, delay, unit);
      }
    };
    long start = slotStartAfter(bounded.now(TimeUnit.NANOSECONDS) + TimeUnit.SECONDS.toNanos(1));
    List<String> fired = new ArrayList<>();
    TimerWheel wheel = TimerWheel.of(bounded);
    wheel.file(new Fires(() -> fired.add("first")), start + TimeUnit.MILLISECONDS.toNanos(1), bounded);
    wheel.file(new Fires(() -> fired.add("second")), start + TimeUnit.MILLISECONDS.toNanos(5), bounded);
    virtual.advanceTimeBy(Duration.ofNanos(start + TimeUnit.MILLISECONDS.toNanos(1)
        - bounded.now(TimeUnit.NANOSECONDS)));
    assertThat(fired).containsExactly("first");
    assertThat(schedules).as("the slot's next task was asked for, and refused").hasValue(2);

    wheel.file(new Fires(() -> fired.add("elsewhere")), start + TimeUnit.SECONDS.toNanos(1), bounded);
    virtual.advanceTimeBy(Duration.ofMillis(10));
    assertThat(fired).as("the timer left in the refused slot").containsExactly("first", "second");
  }

  @Test
  void aSlotWhoseTaskTheSchedulerRefusedAsksAgainForTheNextTimerFiledThere() {
    // A scheduler at its capacity (a bounded one with a full queue) refuses the slot's task; the filing throws, and
    // the next timer filed in that slot asks again rather than waiting on the task that was never scheduled.
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    AtomicBoolean refusing = new AtomicBoolean(true);
    Scheduler full = new DelegatingScheduler(virtual) {
      @Override
      public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        if (refusing.get()) {
          throw new RejectedExecutionException("queue full");
        }
        return super.schedule(task, delay, unit);
      }
    };
    long at = slotStartAfter(full.now(TimeUnit.NANOSECONDS) + TimeUnit.SECONDS.toNanos(1));
    TimerWheel wheel = TimerWheel.of(full);
    Fires refused = new Fires(() -> { });
    assertThatThrownBy(() -> wheel.file(refused, at, full)).isInstanceOf(RejectedExecutionException.class);
    wheel.release(refused, true);   // its owner gives up on it, as a deadline does
    refusing.set(false);

    AtomicLong firedAt = new AtomicLong(-1);
    long next = at + TimeUnit.MILLISECONDS.toNanos(1);
    wheel.file(new Fires(() -> firedAt.set(full.now(TimeUnit.NANOSECONDS))), next, full);
    virtual.advanceTimeBy(Duration.ofSeconds(2));
    assertThat(firedAt).hasValue(next);
  }

  @Test
  void aTimerThatThrowsAJvmFatalErrorLeavesTheOthersOfItsSlotFiringAndTheErrorIsRethrownWithTheOthersSuppressed() {
    // a class that failed to initialise makes every later use of it throw NoClassDefFoundError, which Reactor treats
    // as fatal: the deadlines of the calls filed beside the one that met it must still fire
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    List<Throwable> thrown = new ArrayList<>();
    Scheduler reporting = reporting(virtual, thrown);
    long at = reporting.now(TimeUnit.NANOSECONDS) + TimeUnit.MILLISECONDS.toNanos(20);
    IllegalStateException ordinary = new IllegalStateException("a handler that throws");
    NoClassDefFoundError fatal = new NoClassDefFoundError("Could not initialize class Poisoned");
    AtomicInteger fired = new AtomicInteger();
    TimerWheel wheel = TimerWheel.of(reporting);
    wheel.file(new Fires(() -> {
      throw ordinary;
    }), at, reporting);
    wheel.file(new Fires(() -> {
      throw fatal;
    }), at, reporting);
    wheel.file(new Fires(fired::incrementAndGet), at, reporting);
    wheel.file(new Fires(fired::incrementAndGet), at, reporting);

    virtual.advanceTimeBy(Duration.ofMillis(20));
    assertThat(fired).as("the timers after the fatal one").hasValue(2);
    assertThat(thrown).containsExactly(fatal);
    assertThat(fatal.getSuppressed()).containsExactly(ordinary);
    assertThat(wheel.filed()).isZero();
  }

  @Test
  void timersThatThrowInOneSlotReachTheSchedulersErrorHandlingAsOneErrorWithTheOthersSuppressed() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    List<Throwable> thrown = new ArrayList<>();
    Scheduler reporting = reporting(virtual, thrown);
    long at = reporting.now(TimeUnit.NANOSECONDS) + TimeUnit.MILLISECONDS.toNanos(20);
    IllegalStateException first = new IllegalStateException("first handler");
    IllegalStateException second = new IllegalStateException("second handler");
    AtomicInteger fired = new AtomicInteger();
    TimerWheel wheel = TimerWheel.of(reporting);
    wheel.file(new Fires(() -> {
      throw first;
    }), at, reporting);
    wheel.file(new Fires(fired::incrementAndGet), at, reporting);
    wheel.file(new Fires(() -> {
      throw second;
    }), at, reporting);

    virtual.advanceTimeBy(Duration.ofMillis(20));
    assertThat(fired).hasValue(1);
    assertThat(thrown).containsExactly(first);
    assertThat(first.getSuppressed()).containsExactly(second);
  }

  @Test
  void aFarTimerThatLeavesItsSlotEmptyDisposesTheTaskANearTimerCancelledThereLeft() {
    // The near timer moved the slot's task to its instant; cancelled, it leaves the far one in the slot (a later
    // turn of the wheel). The far one's end empties the slot, and being far, disposes the task at once.
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    long near = slotStartAfter(clock.now(TimeUnit.NANOSECONDS) + TimeUnit.SECONDS.toNanos(1));
    long turn = (long) TimerWheel.SLOTS << TimerWheel.TICK_SHIFT;
    long far = near + (TimerWheel.KEEP_HORIZON / turn + 1) * turn;   // the same slot, beyond the horizon
    Fires farTimer = new Fires(() -> { });
    Fires nearTimer = new Fires(() -> { });
    TimerWheel wheel = TimerWheel.of(clock);
    wheel.file(farTimer, far, clock);
    wheel.file(nearTimer, near, clock);
    assertThat(clock.pendingTasks()).isEqualTo(1);

    wheel.release(nearTimer, true);
    assertThat(clock.pendingTasks()).as("the far timer still waits on the slot's task").isEqualTo(1);
    wheel.release(farTimer, false);
    assertThat(clock.pendingTasks()).as("tasks left once the far timer's end emptied the slot").isZero();
  }

  @Test
  void aFilingOvertakenByAnotherInItsSlotWhileAskingTheSchedulerLeavesTheSlotsTaskAtTheLaterFilingsInstant()
      throws InterruptedException {
    // A timer is filed on one thread and, while that thread asks the scheduler for the slot's task, released and
    // another filed in the same slot, earlier, on this thread (as a deadline's timer is filed again by the timer
    // thread while its call ends elsewhere). The request that was overtaken gives way: the earlier timer fires at
    // its own instant, not at the overtaken request's.
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    CountDownLatch asking = new CountDownLatch(1);
    CountDownLatch answer = new CountDownLatch(1);
    AtomicReference<Thread> slowThread = new AtomicReference<>();
    Scheduler slow = new DelegatingScheduler(virtual) {
      @Override
      public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        if (Thread.currentThread() == slowThread.get()) {
          asking.countDown();
          await(answer);
        }
        return super.schedule(task, delay, unit);
      }
    };
    TimerWheel wheel = TimerWheel.of(slow);
    long start = slotStartAfter(slow.now(TimeUnit.NANOSECONDS) + TimeUnit.SECONDS.toNanos(1));
    long overtaken = start + TimeUnit.MILLISECONDS.toNanos(10);
    long earlier = start + TimeUnit.MILLISECONDS.toNanos(5);
    Fires first = new Fires(() -> { });
    AtomicLong firedAt = new AtomicLong(-1);
    Thread filer = new Thread(() -> wheel.file(first, overtaken, slow), "slow-filer");
    slowThread.set(filer);
    filer.start();
    await(asking);

    wheel.release(first, false);
    wheel.file(new Fires(() -> firedAt.set(virtual.now(TimeUnit.NANOSECONDS))), earlier, slow);
    answer.countDown();
    filer.join(TimeUnit.SECONDS.toMillis(10));
    assertThat(filer.isAlive()).isFalse();

    virtual.advanceTimeBy(Duration.ofNanos(overtaken - virtual.now(TimeUnit.NANOSECONDS)));
    assertThat(firedAt).hasValue(earlier);
  }

  private static void await(CountDownLatch latch) {
    try {
      assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aDeadlineWhoseSchedulerRefusesItsTimerLeavesNothingFiledInTheWheel() {
    // The call fails with the rejection; its timer, filed before the scheduler refused the slot's task, does not
    // stay in the wheel (which would hold the call until another timer is filed in that slot, maybe never).
    Scheduler disposed = Schedulers.newSingle("timer-wheel-disposed");
    disposed.dispose();
    List<Throwable> errors = new ArrayList<>();
    Mono.never()
        .transformDeferred(withDeadline(DeadlineSpec.builder(Duration.ofSeconds(1)).scheduler(() -> disposed).build()))
        .subscribe(v -> { }, errors::add);
    assertThat(errors).singleElement().isInstanceOf(RejectedExecutionException.class);
    assertThat(TimerWheel.of(disposed).filed()).as("timers filed").isZero();
  }

  /** The first instant of a slot at or after {@code at}. */
  private static long slotStartAfter(long at) {
    long tick = 1L << TimerWheel.TICK_SHIFT;
    return (at + tick - 1) & -tick;
  }

  /** A bare timer that runs an action when it fires. */
  /** {@code virtual}, whose tasks' errors (what would reach the scheduler's error handling) go to {@code thrown}. */
  private static Scheduler reporting(VirtualTimeScheduler virtual, List<Throwable> thrown) {
    return new DelegatingScheduler(virtual) {
      @Override
      public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        return super.schedule(() -> {
          try {
            task.run();
          } catch (Throwable e) {
            thrown.add(e);
          }
        }, delay, unit);
      }
    };
  }

  /** A timer with no subscription: the test files it itself, and nothing waits on it. */
  private static final class Fires extends TimerWheel.Timer<Object> {
    private final Runnable action;

    Fires(Runnable action) {
      super(Operators.emptySubscriber());
      this.action = action;
    }

    @Override
    protected void arm() {
      throw new UnsupportedOperationException("filed by the test itself, not through a subscription's gate");
    }

    @Override
    protected void releaseTimer() {
      throw new UnsupportedOperationException("released by the test itself, through its wheel");
    }

    @Override
    protected void expire(long now) {
      action.run();
    }
  }
}
