package io.breakwater.internal.deadline;

import io.breakwater.internal.Saturating;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.scheduler.Scheduler;

/**
 * The timers of deadlines: arming and cancelling one costs its wheel's lock and a few pointer writes, not a task on
 * the {@link Scheduler} (a heap insert under the executor's one lock, then a heap removal).
 *
 * <p>Timers are filed by their instant on the scheduler's clock into one of {@value #SLOTS} slots, each covering
 * 2<sup>{@value #TICK_SHIFT}</sup> ns (about 16.8 ms; after about 18 s the slots wrap round, and a slot holds
 * timers of several rounds). A slot that holds timers has one task on the scheduler, at the earliest instant among
 * them, exactly: under {@code VirtualTimeScheduler} a timer fires at the very nanosecond it was filed for. When the
 * task runs it takes out every timer whose instant has come, schedules itself again at the earliest instant left,
 * and fires the timers it took, in the order they were filed, without holding any lock; if the scheduler refuses that
 * next task without being disposed (a bounded scheduler at its capacity), the wheel's next filing, in any slot, asks
 * for it again. A timer cancelled before its instant is unlinked at once. A slot that a cancellation leaves empty keeps its task (without holding it): the
 * timers filed next in that slot for a later instant ride on it, so that one call after another arms and cancels
 * its timer with a few pointer writes under the wheel's lock and never touches the scheduler. The kept task runs at
 * its instant, finds nothing due, and is gone: once every timer is cancelled, the scheduler holds at most one task
 * per slot, and none once the latest instant those timers were filed for has passed. A timer filed again for an
 * earlier instant (a nested deadline joining) disposes a task its move leaves without timers at once.
 *
 * <p>Calls that start close together in time end close together: their timers share a slot and that slot's one
 * task, so whether 1 or 10 000 calls are in flight the scheduler sees about one task per 16.8 ms of call starts,
 * scheduled once and run once, however many calls there are.
 *
 * <p>Wheels are per thread and per scheduler: {@link #of(Scheduler)} gives the wheel of the calling thread for that
 * scheduler, so calls armed on different threads never contend for a wheel's lock (a timer may still be cancelled or
 * fired from any thread). A thread keeps at most {@value #WHEELS_PER_THREAD} wheels; a wheel holds its scheduler only
 * weakly, and nothing of it once its tasks, kept ones included, have run. A wheel whose scheduler was disposed before
 * its kept tasks ran is dropped the next time its thread takes a wheel for another scheduler, so a thread does not
 * keep a disposed scheduler (a test's {@code VirtualTimeScheduler}) alive. There is no state shared by the whole JVM.
 */
public final class TimerWheel {

  /** log2 of the nanoseconds one slot covers. */
  static final int TICK_SHIFT = 24;
  /** The number of slots; a power of two. */
  static final int SLOTS = 1024;
  /** The wheels one thread keeps, most recently used first. */
  static final int WHEELS_PER_THREAD = 4;
  /** No instant: a slot without a task, a timer that is not filed. */
  static final long NONE = Long.MAX_VALUE;
  /**
   * The longest delay asked of a scheduler (about 73 years): a far instant (a saturated deadline) would overflow the
   * scheduler's own arithmetic, and {@code VirtualTimeScheduler} would run it at once. The task then runs early and
   * schedules itself again.
   */
  static final long MAX_DELAY = Saturating.MAX_DELAY_NANOS;
  /**
   * How far ahead (about 4.6 min) a timer may be armed for its slot to keep its task once the timer is cancelled:
   * the scheduler then holds a kept task at most this long, and at most one per slot. A farther timer (a long or
   * saturated budget) disposes the task of the slot it leaves empty at once.
   */
  public static final long KEEP_HORIZON = 1L << 38;

  private static final ThreadLocal<TimerWheel[]> WHEELS = ThreadLocal.withInitial(
      () -> new TimerWheel[WHEELS_PER_THREAD]);
  private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Slot[].class);
  private static final VarHandle TIMER_SLOT;

  static {
    try {
      TIMER_SLOT = MethodHandles.lookup().findVarHandle(Timer.class, "slot", Slot.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final WeakReference<Scheduler> scheduler;
  private final Slot[] slots = new Slot[SLOTS];
  /** Slots holding timers whose next task the scheduler refused while not disposed; guarded by {@code this}. */
  private final List<Slot> refused = new ArrayList<>();

  private TimerWheel(Scheduler scheduler) {
    this.scheduler = new WeakReference<>(scheduler);
  }

  /** The calling thread's wheel for {@code scheduler}. */
  public static TimerWheel of(Scheduler scheduler) {
    TimerWheel[] wheels = WHEELS.get();
    TimerWheel first = wheels[0];
    if (first != null && first.scheduler.get() == scheduler) {
      return first;
    }
    int i = 1;
    while (i < wheels.length && wheels[i] != null && wheels[i].scheduler.get() != scheduler) {
      i++;
    }
    TimerWheel wheel;
    if (i < wheels.length && wheels[i] != null) {
      wheel = wheels[i];
    } else {
      i = dropDisposed(wheels, i);
      wheel = new TimerWheel(scheduler);
      i = Math.min(i, wheels.length - 1);   // full: the least recently used wheel is dropped; its timers still fire
    }
    System.arraycopy(wheels, 0, wheels, 1, i);
    wheels[0] = wheel;
    return wheel;
  }

  /**
   * Drops the first {@code n} wheels whose scheduler is gone or disposed (a kept task's {@link Disposable} holds its
   * scheduler until it runs, and a disposed scheduler runs nothing); returns how many are left, moved to the front.
   */
  private static int dropDisposed(TimerWheel[] wheels, int n) {
    int kept = 0;
    for (int j = 0; j < n; j++) {
      TimerWheel w = wheels[j];
      Scheduler s = w == null ? null : w.scheduler.get();
      if (s != null && !s.isDisposed()) {
        wheels[kept++] = wheels[j];
      }
    }
    for (int j = kept; j < n; j++) {
      wheels[j] = null;
    }
    return kept;
  }

  /**
   * Files {@code timer}, which must not be filed, for the instant {@code at} in this wheel, whose scheduler is
   * {@code scheduler}. It orders itself with {@link #release} by this wheel's lock alone: a caller that files here,
   * then reads its own state, and whose state changes are followed by {@link #release}, needs no fence, since either
   * the release sees the filing or the filer sees the change. Call it holding no lock.
   *
   * @throws RejectedExecutionException if the scheduler refuses the slot's task (it is being disposed); the timer is
   *     then not filed
   */
  public void file(Timer<?> timer, long at, Scheduler scheduler) {
    Start start;
    List<Start> retries = null;
    synchronized (this) {
      start = slot(at).fileLocked(timer, at);
      if (!refused.isEmpty()) {
        retries = new ArrayList<>(refused.size());
        for (Slot slot : refused) {
          Start retry = slot.restartLocked();
          if (retry != null) {
            retries.add(retry);
          }
        }
        refused.clear();
      }
    }
    if (retries != null) {
      for (Start retry : retries) {
        retry.slot().startOrRefuse(retry, scheduler);
      }
    }
    if (start != null) {
      try {
        start.run(scheduler);
      } catch (RejectedExecutionException rejected) {
        release(timer, false);   // linked before its task was refused: it would hold its owner until refiled
        throw rejected;
      }
    }
  }

  /**
   * Unfiles {@code timer}, which only this wheel files, if it is filed, from any thread, under this wheel's lock. If
   * that leaves its slot empty, the slot keeps its task for the timers filed next when the timer was armed for at
   * most {@link #KEEP_HORIZON} ahead ({@code near}), and disposes it at once otherwise (see
   * {@link Slot#cancelLocked}). A timer being fired may still fire: it must check for itself that it is still wanted.
   * Call it holding no lock a scheduler task may take.
   */
  public void release(Timer<?> timer, boolean near) {
    Disposable stale = null;
    synchronized (this) {
      Slot filedIn = timer.slot;
      if (filedIn != null) {
        stale = filedIn.cancelLocked(timer, near);
      }
    }
    if (stale != null) {
      stale.dispose();
    }
  }

  /** A slot's next task was refused by a scheduler that is not disposed: the next filing asks for it again. */
  void refused(Slot slot) {
    synchronized (this) {
      if (!refused.contains(slot)) {
        refused.add(slot);
      }
    }
  }

  /** The slot for timers of instant {@code at}. */
  Slot slot(long at) {
    int index = (int) (at >> TICK_SHIFT) & (SLOTS - 1);
    Slot slot = slots[index];
    if (slot == null) {
      slot = new Slot(this);
      Slot raced = (Slot) SLOT.compareAndExchange(slots, index, null, slot);
      if (raced != null) {
        slot = raced;
      }
    }
    return slot;
  }

  /** The timers filed in this wheel now (for tests: it takes the wheel's lock once per slot). */
  int filed() {
    int n = 0;
    for (int i = 0; i < SLOTS; i++) {
      Slot slot = (Slot) SLOT.getVolatile(slots, i);
      if (slot != null) {
        n += slot.size();
      }
    }
    return n;
  }

  /**
   * A subscription's timer (see {@link GatedTimer}) filed in a wheel, to fire at an instant. The wheel only files,
   * unlinks and fires it: whoever files it serialises its own filing (one filing at a time per timer), while a slot's
   * task may take it out concurrently, under the wheel's lock, to fire it.
   */
  public abstract static class Timer<T> extends GatedTimer<T> {
    /** The slot this timer is filed in, or {@code null}; links and {@link #at} are guarded by its lock. */
    @Nullable volatile Slot slot;
    long at = NONE;
    @Nullable Timer<?> prev;
    @Nullable Timer<?> next;
    /** The next timer taken out by the same run of a slot's task. */
    @Nullable Timer<?> nextExpired;

    protected Timer(CoreSubscriber<? super T> actual) {
      super(actual);
    }

    /** Called once the instant this timer was filed for has come ({@code now >= at}), on the scheduler's thread. */
    protected abstract void expire(long now);
  }

  /** A task to schedule once the locks are released: a slot's earliest instant changed. */
  record Start(Slot slot, long generation, long at) {
    /** Schedules the slot's task on {@code scheduler}; rethrows a rejection once the slot has forgotten it. */
    void run(Scheduler scheduler) {
      slot.start(generation, at, scheduler);
    }
  }

  /**
   * A doubly linked list of timers, with one scheduler task at the earliest instant among them. Its lock is its
   * wheel's: a timer that keeps its own filing state under the same lock (a deadline's subscriber) files, moves and
   * unfiles itself with one lock taken, not two.
   */
  static final class Slot {
    /** The wheel's lock. */
    final Object lock;
    final TimerWheel wheel;
    // All guarded by lock.
    @Nullable private Timer<?> head;
    @Nullable private Timer<?> tail;
    /** The instant of the task requested last, or NONE when no task is pending. */
    private long taskAt = NONE;
    /** Counts task requests, so that a task that was superseded (or has run) is told from the current one. */
    private long generation;
    @Nullable private Disposable task;

    Slot(TimerWheel wheel) {
      this.lock = wheel;
      this.wheel = wheel;
    }

    /**
     * Asks again for the task of a slot whose task the scheduler refused, if it still holds timers and has no task;
     * the caller holds the wheel's lock.
     */
    @Nullable
    Start restartLocked() {
      if (taskAt != NONE || head == null) {
        return null;
      }
      long earliest = NONE;
      for (Timer<?> t = head; t != null; t = t.next) {
        earliest = Math.min(earliest, t.at);
      }
      taskAt = earliest;
      return new Start(this, ++generation, earliest);
    }

    /** Starts {@code next}; a refusal by a scheduler that is not disposed leaves the slot to the wheel's next filing. */
    void startOrRefuse(Start next, Scheduler scheduler) {
      try {
        next.run(scheduler);
      } catch (RejectedExecutionException rejected) {
        // A disposed scheduler: the timers left on it die with it, as its own tasks do.
        if (!scheduler.isDisposed()) {
          wheel.refused(this);
        }
      }
    }

    /**
     * Files {@code timer} (not filed anywhere) for {@code at}; the caller holds the wheel's lock. Returns the task to
     * start once the caller has released its locks, or {@code null} when the slot's task already runs early enough.
     */
    @Nullable
    Start fileLocked(Timer<?> timer, long at) {
      timer.at = at;
      timer.next = null;
      timer.prev = tail;
      if (tail == null) {
        head = timer;
      } else {
        tail.next = timer;
      }
      tail = timer;
      TIMER_SLOT.setRelease(timer, this);   // read under the lock, or by release(), which re-reads it under it
      if (at < taskAt) {
        taskAt = at;
        return new Start(this, ++generation, at);
      }
      return null;
    }

    /**
     * Unlinks {@code timer}, which is being filed again elsewhere, if it is still filed here; the caller holds the
     * wheel's lock. Returns the slot's task, to dispose once the caller has released its locks, when the slot is left
     * empty.
     */
    @Nullable
    Disposable unfileLocked(Timer<?> timer) {
      if (timer.slot != this) {
        return null;   // taken out by the slot's task, which fires it
      }
      unlink(timer);
      if (head == null && taskAt != NONE) {
        Disposable pending = task;
        task = null;
        taskAt = NONE;
        generation++;
        return pending;
      }
      return null;
    }

    /**
     * Unlinks {@code timer}, which is over (its call ended or was cancelled), if it is still filed here; the caller
     * holds the wheel's lock. A slot left empty by a {@code near} timer keeps its task: the next timer filed here for
     * an instant no earlier than that task's rides on it, so that arming and cancelling one call after another costs
     * no scheduling and no disposal; one filed for an earlier instant disposes it as it schedules its own, so that the
     * slot never has more than one task. The kept task fires nothing at its instant (nothing is due), and is gone from
     * the scheduler from then on, and from the slot too. A slot left empty by a timer that is not near returns its task, to dispose once
     * the caller has released its locks, as {@link #unfileLocked} does.
     */
    @Nullable
    Disposable cancelLocked(Timer<?> timer, boolean near) {
      if (timer.slot != this) {
        return null;   // taken out by the slot's task, which fires it
      }
      if (!near) {
        return unfileLocked(timer);
      }
      unlink(timer);
      return null;
    }

    private void unlink(Timer<?> timer) {
      Timer<?> p = timer.prev;
      Timer<?> n = timer.next;
      if (p == null) {
        head = n;
      } else {
        p.next = n;
      }
      if (n == null) {
        tail = p;
      } else {
        n.prev = p;
      }
      timer.prev = null;
      timer.next = null;
      TIMER_SLOT.setRelease(timer, null);
    }

    int size() {
      synchronized (lock) {
        int n = 0;
        for (Timer<?> t = head; t != null; t = t.next) {
          n++;
        }
        return n;
      }
    }

    /** Schedules the task of generation {@code g} for {@code at}, unless a later request superseded it. */
    void start(long g, long at, Scheduler scheduler) {
      Disposable scheduled;
      try {
        // Under a VirtualTimeScheduler a task that is due runs inside schedule(): no lock may be held here.
        long delay = Math.min(MAX_DELAY, Math.max(0L, at - scheduler.now(TimeUnit.NANOSECONDS)));
        scheduled = scheduler.schedule(new Run(this, g, scheduler), delay, TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException rejected) {
        synchronized (lock) {
          if (generation == g) {
            taskAt = NONE;   // the next timer filed here asks again
          }
        }
        throw rejected;
      }
      Disposable superseded = scheduled;
      synchronized (lock) {
        if (generation == g) {
          superseded = task;
          task = scheduled;
        }
      }
      if (superseded != null) {
        superseded.dispose();   // the task this one replaces, or this one if it has run or was replaced already
      }
    }

    /**
     * The slot's task ran: fires every timer whose instant the scheduler's clock has reached, and schedules the next
     * task. A task that runs before its instant (a clock of coarser grain than the delays, a capped delay) fires
     * nothing early: it schedules itself again.
     */
    void run(long g, Scheduler scheduler) {
      long now = scheduler.now(TimeUnit.NANOSECONDS);
      Timer<?> expired = null;
      Timer<?> expiredTail = null;
      Start next = null;
      synchronized (lock) {
        if (generation == g) {
          generation++;
          taskAt = NONE;
          task = null;
        }
        long earliest = NONE;
        for (Timer<?> t = head; t != null; ) {
          Timer<?> following = t.next;
          if (t.at <= now) {
            unlink(t);
            if (expiredTail == null) {
              expired = t;
            } else {
              expiredTail.nextExpired = t;
            }
            expiredTail = t;
          } else if (t.at < earliest) {
            earliest = t.at;
          }
          t = following;
        }
        if (earliest < taskAt) {
          taskAt = earliest;
          next = new Start(this, ++generation, earliest);
        }
      }
      Throwable failure = null;
      if (next != null) {
        startOrRefuse(next, scheduler);
      }
      for (Timer<?> t = expired; t != null; ) {
        Timer<?> following = t.nextExpired;   // read first: t may be filed and taken out again while it fires
        t.nextExpired = null;
        try {
          t.expire(now);
        } catch (Throwable e) {
          // Every timer taken out fires, whatever another throws: they are unlinked already, and one call's error,
          // even a JVM-fatal one (a class that failed to initialise), must not leave the calls filed beside it
          // without their deadline. Once all have fired, a fatal error is the one rethrown, the others suppressed.
          if (failure == null) {
            failure = e;
          } else if (Exceptions.isJvmFatal(e) && !Exceptions.isJvmFatal(failure)) {
            e.addSuppressed(failure);
            failure = e;
          } else {
            failure.addSuppressed(e);
          }
        }
        t = following;
      }
      if (failure != null) {
        Exceptions.throwIfJvmFatal(failure);
        throw Exceptions.propagate(failure);   // to the scheduler's error handling, as a timer task's own would go
      }
    }
  }

  /** A slot's task on the scheduler. */
  private record Run(Slot slot, long generation, Scheduler scheduler) implements Runnable {
    @Override
    public void run() {
      slot.run(generation, scheduler);
    }
  }
}
