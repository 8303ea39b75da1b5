package io.breakwater.internal.limit;

import io.breakwater.deadline.Deadline;
import io.breakwater.internal.Durations;
import io.breakwater.internal.Lift;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.LimitExceededException.Reason;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.ContextView;

/**
 * The in-memory concurrency limit. A permit is one atomic increment of {@code inFlight} while no call waits; the
 * waiting calls form a FIFO list guarded by this object's monitor, and a released permit goes to the head of the list
 * before any newcomer. A waiting call counts itself in {@code queued} before it looks at {@code inFlight}, and a
 * releasing call decrements {@code inFlight} before it looks at {@code queued}, so a permit is never left free while
 * a call waits for it.
 */
public final class LocalConcurrencyLimit extends ConcurrencyEngine {

  private final ConcurrencySettings settings;
  private final long maxWaitNanos;
  @Nullable
  private final VegasLimit adaptive;

  private volatile int limit;
  private volatile int inFlight;
  private volatile int queued;
  private static final AtomicIntegerFieldUpdater<LocalConcurrencyLimit> IN_FLIGHT =
      AtomicIntegerFieldUpdater.newUpdater(LocalConcurrencyLimit.class, "inFlight");
  private static final AtomicIntegerFieldUpdater<LocalConcurrencyLimit> QUEUED =
      AtomicIntegerFieldUpdater.newUpdater(LocalConcurrencyLimit.class, "queued");

  /** The FIFO of waiting calls; guarded by {@code this}. */
  @Nullable
  private Waiter head;
  @Nullable
  private Waiter tail;
  /** The waiting calls of each task; guarded by {@code this}. */
  private final TaskShares shares;

  private final LimitMetrics metrics;

  public LocalConcurrencyLimit(ConcurrencySettings settings) {
    this.settings = settings;
    this.maxWaitNanos = settings.maxWaitNanos();
    this.shares = new TaskShares(settings.maxQueuePerTask());
    this.adaptive = settings.adaptive() == null ? null : new VegasLimit(settings.adaptive());
    this.limit = settings.initialLimit();
    this.metrics = LimitMetrics.of(this, settings.meterRegistry());
  }

  @Override
  public ConcurrencySettings settings() {
    return settings;
  }

  @Override
  public String name() {
    return settings.name();
  }

  @Override
  public int limit() {
    return limit;
  }

  @Override
  public int inFlight() {
    return inFlight;
  }

  @Override
  public int queued() {
    return queued;
  }

  @Override
  public <T> void subscribe(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono) {
    if (tryAcquire()) {
      Lift.subscribeUpstream(source, holder(actual, mono));
      return;
    }
    waitForPermit(source, actual, mono);
  }

  /** A permit at once: none is waiting and one is free. */
  private boolean tryAcquire() {
    if (queued != 0) {
      return false;
    }
    for (;;) {
      int n = inFlight;
      if (n >= limit) {
        return false;
      }
      if (IN_FLIGHT.compareAndSet(this, n, n + 1)) {
        return true;
      }
    }
  }

  private <T> void waitForPermit(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono) {
    ContextView ctx = actual.currentContext();
    Deadline deadline = Deadline.from(ctx).orElse(null);
    long wait = deadline == null ? maxWaitNanos : Math.min(maxWaitNanos, deadline.remainingNanos());
    if (wait <= 0 || settings.maxQueue() == 0) {
      String why = settings.maxQueue() == 0 || maxWaitNanos == 0 ? "it does not queue calls"
          : "the deadline in force has passed";
      LimitExceededException refusal = new LimitExceededException(name(), Reason.WOULD_WAIT_TOO_LONG, null,
          "all " + limit + " permits are taken and " + why);
      metrics.refused(refusal);
      Operators.error(actual, refusal);
      return;
    }
    Waiter waiter = new Waiter(wait, TaskShares.taskOf(ctx));
    waiter.run(actual, () -> enqueue(waiter), () -> permitted(source, mono));
  }

  private <T> Publisher<T> permitted(Publisher<? extends T> source, boolean mono) {
    return subscriber -> source.subscribe(holder(Operators.toCoreSubscriber(subscriber), mono));
  }

  /** The subscriber that holds a permit for {@code actual}'s call and gives it back. */
  private <T> PermitSubscriber<T> holder(CoreSubscriber<? super T> actual, boolean mono) {
    return adaptive == null ? new PermitSubscriber<>(actual, this, mono)
        : new AdaptivePermitSubscriber<>(actual, this, mono);
  }

  private void enqueue(Waiter waiter) {
    boolean acquired = false;
    boolean full = false;
    boolean taskFull = false;
    synchronized (this) {
      QUEUED.incrementAndGet(this);
      if (head == null) {
        for (int n = inFlight; n < limit; n = inFlight) {
          if (IN_FLIGHT.compareAndSet(this, n, n + 1)) {
            acquired = true;
            break;
          }
        }
      }
      if (!acquired && queued - 1 >= settings.maxQueue()) {
        full = true;
      } else if (!acquired && shares.full(waiter.task)) {
        taskFull = true;
      }
      if (acquired || full || taskFull) {
        QUEUED.decrementAndGet(this);
      } else {
        link(waiter);
      }
    }
    if (acquired) {
      waiter.grantNow();
    } else if (full) {
      waiter.refuse(new LimitExceededException(name(), Reason.QUEUE_FULL, null, "all " + limit
          + " permits are taken and " + settings.maxQueue() + " calls already wait"));
    } else if (taskFull) {
      waiter.refuse(TaskShares.full(name(), settings.maxQueuePerTask(), settings.maxQueue()));
    } else {
      waiter.expireAfter(scheduler(), waiter.waitNanos);
    }
  }

  /** Gives a permit back: to the first waiting call if there is one, else to the pool. */
  void release() {
    IN_FLIGHT.decrementAndGet(this);
    if (queued != 0) {
      drain();
    }
  }

  /** Gives a permit back and tells the adaptive limit how the call went. */
  void release(long startNanos, long endNanos, boolean drop) {
    int inFlightThen = inFlight;
    IN_FLIGHT.decrementAndGet(this);
    int changed = Objects.requireNonNull(adaptive, "only an adaptive limit samples")
        .sample(startNanos, endNanos, drop, inFlightThen);
    if (changed > 0) {
      limit = changed;
    }
    if (queued != 0) {
      drain();
    }
  }

  /** Hands free permits to waiting calls in FIFO order; their calls run outside the monitor. */
  private void drain() {
    Waiter granted = null;
    Waiter last = null;
    synchronized (this) {
      while (head != null) {
        int n = inFlight;
        if (n >= limit) {
          break;
        }
        if (!IN_FLIGHT.compareAndSet(this, n, n + 1)) {
          continue;
        }
        Waiter w = head;
        unlink(w);
        if (w.grant()) {
          if (last == null) {
            granted = w;
          } else {
            last.nextGranted = w;
          }
          last = w;
        } else {
          IN_FLIGHT.decrementAndGet(this);   // it was cancelled or expired meanwhile: the permit stays free
        }
      }
    }
    for (Waiter w = granted; w != null; ) {
      Waiter next = w.nextGranted;
      w.nextGranted = null;
      w.deliver();
      w = next;
    }
  }

  private void link(Waiter w) {
    w.linked = true;
    shares.joined(w.task);
    w.prev = tail;
    if (tail == null) {
      head = w;
    } else {
      tail.next = w;
    }
    tail = w;
  }

  /** Guarded by {@code this}. */
  private void unlink(Waiter w) {
    if (!w.linked) {
      return;
    }
    w.linked = false;
    shares.left(w.task);
    if (w.prev == null) {
      head = w.next;
    } else {
      w.prev.next = w.next;
    }
    if (w.next == null) {
      tail = w.prev;
    } else {
      w.next.prev = w.prev;
    }
    w.prev = null;
    w.next = null;
    QUEUED.decrementAndGet(this);
  }

  boolean isDrop(Throwable error) {
    return VegasLimit.isDrop(settings.classifier().classify(error));
  }

  long now() {
    return scheduler().now(TimeUnit.NANOSECONDS);
  }

  private Scheduler scheduler() {
    return settings.scheduler().get();
  }

  @Override
  public String toString() {
    return "ConcurrencyLimit{" + name() + ", " + (adaptive == null ? "fixed " : "adaptive ") + limit + ", in flight "
        + inFlight + ", queued " + queued + ", maxWait " + Durations.format(Duration.ofNanos(maxWaitNanos))
        + ", maxQueue " + settings.maxQueue() + "}";
  }

  /** A call waiting for a permit; linked in the FIFO while it waits. */
  private final class Waiter extends Turn {

    @Override
    LimitMetrics metrics() {
      return metrics;
    }
    final long waitNanos;
    @Nullable Waiter prev;
    @Nullable Waiter next;
    @Nullable Waiter nextGranted;
    boolean linked;

    /** The agent task the call belongs to, or {@link TaskShares#NO_TASK}. */
    final Object task;

    Waiter(long waitNanos, Object task) {
      this.waitNanos = waitNanos;
      this.task = task;
    }

    @Override
    void leaveQueue() {
      synchronized (LocalConcurrencyLimit.this) {
        unlink(this);
      }
    }

    @Override
    void returnGrant() {
      release();
    }

    @Override
    Throwable expired() {
      return new LimitExceededException(name(), Reason.WAITED_TOO_LONG, null, "no permit of " + limit
          + " came free within " + Durations.format(Duration.ofNanos(waitNanos)) + " (" + inFlight
          + " in flight, " + queued + " queued)");
    }
  }
}
