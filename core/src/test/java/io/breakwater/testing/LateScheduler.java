package io.breakwater.testing;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * A scheduler whose delayed tasks run late by a settable lag, as timers do on a starved machine (a saturated CPU, a
 * long GC pause), delegating to another (usually a {@code VirtualTimeScheduler}) for time. Immediate tasks and
 * workers are the delegate's.
 */
public final class LateScheduler extends DelegatingScheduler {

  private volatile long lagNanos;

  public LateScheduler(Scheduler delegate) {
    super(delegate);
  }

  /** Delayed tasks scheduled from now on run {@code lag} late. */
  public void lag(Duration lag) {
    this.lagNanos = lag.toNanos();
  }

  @Override
  public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
    return delegate.schedule(task, unit.toNanos(delay) + lagNanos, TimeUnit.NANOSECONDS);
  }
}
