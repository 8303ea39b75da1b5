package io.breakwater.benchmarks.load;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * A scheduler that counts the tasks scheduled on it and neither run nor disposed yet: after a cancellation storm it
 * must come back to zero, or a timer was left behind. Delegates to another scheduler.
 */
final class LiveTimers implements Scheduler {

  private final Scheduler delegate;
  private final AtomicLong live = new AtomicLong();

  LiveTimers(Scheduler delegate) {
    this.delegate = delegate;
  }

  long live() {
    return live.get();
  }

  @Override
  public Disposable schedule(Runnable task) {
    Tracked tracked = new Tracked(task, false);
    return tracked.bind(delegate.schedule(tracked));
  }

  @Override
  public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
    Tracked tracked = new Tracked(task, false);
    return tracked.bind(delegate.schedule(tracked, delay, unit));
  }

  @Override
  public Disposable schedulePeriodically(Runnable task, long initialDelay, long period, TimeUnit unit) {
    Tracked tracked = new Tracked(task, true);
    return tracked.bind(delegate.schedulePeriodically(tracked, initialDelay, period, unit));
  }

  @Override
  public long now(TimeUnit unit) {
    return delegate.now(unit);
  }

  @Override
  public Worker createWorker() {
    Worker worker = delegate.createWorker();
    reactor.core.Disposable.Composite tasks = reactor.core.Disposables.composite();
    return new Worker() {
      @Override
      public Disposable schedule(Runnable task) {
        Tracked tracked = new Tracked(task, false);
        tasks.add(tracked);
        return tracked.bind(worker.schedule(tracked));
      }

      @Override
      public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        Tracked tracked = new Tracked(task, false);
        tasks.add(tracked);
        return tracked.bind(worker.schedule(tracked, delay, unit));
      }

      @Override
      public Disposable schedulePeriodically(Runnable task, long initialDelay, long period, TimeUnit unit) {
        Tracked tracked = new Tracked(task, true);
        tasks.add(tracked);
        return tracked.bind(worker.schedulePeriodically(tracked, initialDelay, period, unit));
      }

      @Override
      public void dispose() {
        tasks.dispose();
        worker.dispose();
      }

      @Override
      public boolean isDisposed() {
        return worker.isDisposed();
      }
    };
  }

  @Override
  public void dispose() {
    // the delegate is shared: not ours to dispose
  }

  /** One task: live from scheduling until it has run (once, unless periodic) or is disposed. */
  private final class Tracked implements Runnable, Disposable {
    private final Runnable task;
    private final boolean periodic;
    private final AtomicBoolean done = new AtomicBoolean();
    private volatile Disposable scheduled = reactor.core.Disposables.disposed();

    Tracked(Runnable task, boolean periodic) {
      this.task = task;
      this.periodic = periodic;
      live.incrementAndGet();
    }

    Disposable bind(Disposable scheduled) {
      this.scheduled = scheduled;
      return this;
    }

    @Override
    public void run() {
      try {
        task.run();
      } finally {
        if (!periodic) {
          finish();
        }
      }
    }

    private void finish() {
      if (done.compareAndSet(false, true)) {
        live.decrementAndGet();
      }
    }

    @Override
    public void dispose() {
      finish();
      scheduled.dispose();
    }

    @Override
    public boolean isDisposed() {
      return done.get();
    }
  }
}
