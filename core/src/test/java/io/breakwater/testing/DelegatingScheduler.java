package io.breakwater.testing;

import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * A scheduler that passes everything (time, tasks, workers, disposal) to another one, usually a
 * {@code VirtualTimeScheduler}; tests override what they change: when delayed tasks run, what the clock reads,
 * whether a task is refused.
 */
public class DelegatingScheduler implements Scheduler {

  protected final Scheduler delegate;

  public DelegatingScheduler(Scheduler delegate) {
    this.delegate = delegate;
  }

  @Override
  public Disposable schedule(Runnable task) {
    return delegate.schedule(task);
  }

  @Override
  public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
    return delegate.schedule(task, delay, unit);
  }

  @Override
  public long now(TimeUnit unit) {
    return delegate.now(unit);
  }

  @Override
  public Worker createWorker() {
    return delegate.createWorker();
  }

  @Override
  public void dispose() {
    delegate.dispose();
  }
}
