package io.breakwater.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.scheduler.Scheduler;

/**
 * A scheduler whose clock and timers move only when a test says so, from whatever thread calls it: {@link #advance}
 * moves the clock and runs the timers that came due, on the caller's thread. Smaller than a
 * {@code VirtualTimeScheduler} (one monitor, no worker queues), so that a tool exploring interleavings explores the
 * code under test rather than the scheduler. Immediate tasks run at once on the caller's thread.
 */
public final class SteppedScheduler implements Scheduler {

  private long nanos;
  private final List<Timer> timers = new ArrayList<>();

  /** A timer: due at {@code at}, run at most once, or disposed. */
  private final class Timer implements Disposable {
    final Runnable task;
    final long at;
    boolean disposed;

    Timer(Runnable task, long at) {
      this.task = task;
      this.at = at;
    }

    @Override
    public void dispose() {
      synchronized (SteppedScheduler.this) {
        disposed = true;
        timers.remove(this);
      }
    }

    @Override
    public boolean isDisposed() {
      synchronized (SteppedScheduler.this) {
        return disposed;
      }
    }
  }

  @Override
  public synchronized long now(TimeUnit unit) {
    return unit.convert(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public Disposable schedule(Runnable task) {
    task.run();
    return Disposables.disposed();
  }

  @Override
  public synchronized Disposable schedule(Runnable task, long delay, TimeUnit unit) {
    Timer t = new Timer(task, nanos + unit.toNanos(Math.max(0, delay)));
    timers.add(t);
    return t;
  }

  /** Timers scheduled and neither run nor disposed. */
  public synchronized int pendingTimers() {
    return timers.size();
  }

  /** Moves the clock by {@code delta} and runs, on this thread and outside the monitor, every timer now due. */
  public void advance(long delta, TimeUnit unit) {
    List<Timer> due = new ArrayList<>();
    synchronized (this) {
      nanos += unit.toNanos(delta);
      for (Timer t : List.copyOf(timers)) {
        if (t.at <= nanos) {
          t.disposed = true;
          timers.remove(t);
          due.add(t);
        }
      }
    }
    for (Timer t : due) {
      t.task.run();
    }
  }

  @Override
  public Worker createWorker() {
    throw new UnsupportedOperationException("SteppedScheduler has no workers: the limits schedule on it directly");
  }
}
