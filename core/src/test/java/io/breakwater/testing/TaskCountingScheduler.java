package io.breakwater.testing;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * A scheduler that delegates to another (usually a {@code VirtualTimeScheduler}) and counts the delayed tasks that
 * are still pending: scheduled, neither run nor disposed. Tests use it to prove that timers are armed only when
 * needed and are never left behind after cancellation.
 */
public final class TaskCountingScheduler extends DelegatingScheduler {

  private final AtomicInteger pending = new AtomicInteger();
  private final AtomicInteger scheduled = new AtomicInteger();

  public TaskCountingScheduler(Scheduler delegate) {
    super(delegate);
  }

  /** Delayed tasks scheduled and not yet run or disposed. */
  public int pendingTasks() {
    return pending.get();
  }

  /** Delayed tasks ever scheduled. */
  public int scheduledTasks() {
    return scheduled.get();
  }

  @Override
  public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
    scheduled.incrementAndGet();
    pending.incrementAndGet();
    AtomicBoolean done = new AtomicBoolean();
    Disposable d = delegate.schedule(() -> {
      if (done.compareAndSet(false, true)) {
        pending.decrementAndGet();
      }
      task.run();
    }, delay, unit);
    return new Disposable() {
      @Override
      public void dispose() {
        if (done.compareAndSet(false, true)) {
          pending.decrementAndGet();
        }
        d.dispose();
      }

      @Override
      public boolean isDisposed() {
        return d.isDisposed();
      }
    };
  }
}
