package io.breakwater.internal.limit;

import io.breakwater.deadline.Deadline;
import io.breakwater.internal.Durations;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.StoreCallBound;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.LimitExceededException.Reason;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.context.ContextView;

/**
 * A concurrency limit whose permits live in a {@link PermitStore} shared by every instance. The calls of this instance
 * wait in a local FIFO; its head asks the store for a permit (one atomic step), again whenever a permit of this
 * instance comes back and every {@code pollInterval} otherwise. A permit is leased and its lease renewed every third of
 * it while the call runs, so the permits of an instance that dies come back when their leases run out.
 *
 * <p>When the store does not answer within {@code operationTimeout}, a limit that fails open runs the waiting calls
 * through a local limit of the same size (each instance alone then keeps to the shared limit), and asks the store
 * again after a second; one that fails closed refuses them with {@code STORE_UNAVAILABLE}. A call cancelled while its
 * permit is being taken gives the permit back as soon as it arrives; a permit whose answer timed out comes back when
 * its lease runs out. A {@code Mono}'s permit goes back with its value, as in the local limit.
 */
public final class SharedConcurrencyLimit extends ConcurrencyEngine {

  private static final Logger LOG = Loggers.getLogger(SharedConcurrencyLimit.class);
  /** The store's answer when no permit is free: a permit's id is never empty. */
  private static final String NO_PERMIT = "";

  private final ConcurrencySettings settings;
  private final SharedSettings shared;
  private final PermitStore store;
  private final LocalConcurrencyLimit fallback;
  private final long maxWaitNanos;

  /** The waiting calls, oldest first; guarded by {@code this}. */
  private final ArrayDeque<Waiter> queue = new ArrayDeque<>();
  private volatile int queued;
  private volatile int inFlight;
  /** Whether the head's request to the store is in flight; guarded by {@code this}. */
  private boolean asking;
  @Nullable
  private Disposable poll;
  private volatile boolean limitSet;
  /** Until when the store is taken as unreachable, on the limit's clock. */
  private final StoreOutage outage = new StoreOutage();

  private final LimitMetrics metrics;

  public SharedConcurrencyLimit(ConcurrencySettings settings, SharedSettings shared, PermitStore store) {
    if (settings.adaptive() != null) {
      throw new IllegalArgumentException("Shared concurrency limit '" + settings.name() + "' is adaptive: a shared "
          + "limit is fixed; give it a limit, or keep an adaptive limit per instance");
    }
    this.settings = settings;
    this.shared = shared;
    this.store = store;
    this.fallback = new LocalConcurrencyLimit(settings);
    this.maxWaitNanos = settings.maxWaitNanos();
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
    return settings.fixed();
  }

  @Override
  public int inFlight() {
    return inFlight + fallback.inFlight();
  }

  @Override
  public int queued() {
    return queued + fallback.queued();
  }

  @Override
  public <T> void subscribe(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono) {
    ContextView ctx = actual.currentContext();
    Deadline deadline = Deadline.from(ctx).orElse(null);
    long wait = deadline == null ? maxWaitNanos : Math.min(maxWaitNanos, deadline.remainingNanos());
    Waiter waiter = new Waiter(wait, TaskShares.taskOf(ctx));
    waiter.run(actual, () -> enqueue(waiter), () -> waiter.permitted(source, mono));
  }

  private void enqueue(Waiter waiter) {
    boolean waits = waiter.waitNanos > 0 && settings.maxQueue() > 0;
    boolean full;
    boolean behind = false;
    boolean taskFull = false;
    synchronized (this) {
      full = queue.size() >= Math.max(1, settings.maxQueue());
      behind = !waits && !queue.isEmpty();
      taskFull = !full && !behind && holdsItsShare(waiter.task);
      if (!full && !behind && !taskFull) {
        queue.add(waiter);
        queued = queue.size();
      }
    }
    if (behind) {
      waiter.refuse(new LimitExceededException(name(), Reason.WOULD_WAIT_TOO_LONG, null, "calls already wait for "
          + "a permit of " + store + " and " + (maxWaitNanos > 0 && settings.maxQueue() > 0
          ? "the deadline in force has passed" : "it does not queue calls")));
      return;
    }
    if (full) {
      waiter.refuse(new LimitExceededException(name(), Reason.QUEUE_FULL, null, queue.size()
          + " calls already wait for a permit of " + store));
      return;
    }
    if (taskFull) {
      waiter.refuse(TaskShares.full(name(), settings.maxQueuePerTask(), settings.maxQueue()));
      return;
    }
    if (waits) {
      waiter.expireAfter(scheduler(), waiter.waitNanos);
    }
    pump();
  }

  /**
   * Whether {@code task} already has {@code maxQueuePerTask} calls waiting; a count over the queue, which a shared
   * limit's store call outweighs. Guarded by {@code this}.
   */
  private boolean holdsItsShare(Object task) {
    if (task == TaskShares.NO_TASK) {
      return false;
    }
    int waiting = 0;
    for (Waiter w : queue) {
      if (w.task == task && w.isWaiting() && ++waiting >= settings.maxQueuePerTask()) {
        return true;
      }
    }
    return false;
  }

  /** Asks the store for a permit for the first waiting call, unless a request is in flight. */
  private void pump() {
    Waiter head;
    synchronized (this) {
      if (asking) {
        return;
      }
      while ((head = queue.peek()) != null && !head.isWaiting()) {
        queue.poll();
      }
      queued = queue.size();
      if (head == null) {
        return;
      }
      asking = true;
      if (poll != null) {
        poll.dispose();
        poll = null;
      }
    }
    if (outage.leaveAlone(now())) {
      storeUnreachable(null);
      return;
    }
    Waiter asked = head;
    // deferred, as every store call here: a store that throws instead of answering with an error fails the request
    Mono<Void> setUp = limitSet ? Mono.empty()
        : Mono.defer(() -> store.limit(settings.fixed())).doOnSuccess(v -> limitSet = true);
    // One answer per request: a Mono's subscriber given a completion callback runs it after a value too, and the
    // head's request would then be taken as over while the next one is in flight (two requests, one permit lost).
    StoreCallBound.within(setUp.then(Mono.defer(() -> store.tryAcquire(shared.lease()))), shared.operationTimeout(),
            scheduler())
        .defaultIfEmpty(NO_PERMIT)
        .subscribe(id -> {
          if (id.isEmpty()) {
            noPermit(asked);
          } else {
            permit(asked, id);
          }
        }, this::storeUnreachable);
  }

  private void permit(Waiter asked, String id) {
    boolean granted;
    synchronized (this) {
      asking = false;
      asked.permitId = id;   // before the grant: a caller leaving right after it gives this permit back
      granted = asked.grant();
      if (granted) {
        queue.remove(asked);
        queued = queue.size();
        inFlight++;
      }
    }
    if (granted) {
      asked.deliver();
      pump();
    } else {
      giveBack(id);   // the caller left while the permit was on its way
    }
  }

  private void noPermit(Waiter asked) {
    synchronized (this) {
      asking = false;
    }
    if (asked.waitNanos <= 0 || settings.maxQueue() == 0) {
      asked.fail(new LimitExceededException(name(), Reason.WOULD_WAIT_TOO_LONG, null, "all " + limit()
          + " permits of " + store + " are taken and " + (asked.waitNanos <= 0 && maxWaitNanos > 0
          && settings.maxQueue() > 0 ? "the deadline in force has passed" : "it does not queue calls")));
      synchronized (this) {
        queue.remove(asked);
        queued = queue.size();
      }
      pump();
      return;
    }
    synchronized (this) {
      if (poll == null && !queue.isEmpty()) {
        poll = scheduler().schedule(() -> {
          synchronized (this) {
            poll = null;
          }
          pump();
        }, Saturating.nanos(shared.pollInterval()), TimeUnit.NANOSECONDS);
      }
    }
  }

  /** The store did not answer: every waiting call goes to the local fallback, or is refused. */
  private void storeUnreachable(@Nullable Throwable error) {
    List<Waiter> waiting = new ArrayList<>();
    synchronized (this) {
      asking = false;
      waiting.addAll(queue);
      queue.clear();
      queued = 0;
    }
    // a waiter let through keeps a null permitId: its call goes through the local fallback
    outage.letThroughOrRefuse(error, now(), shared.failOpen(), LOG, "Concurrency limit '" + name() + "'", name(),
        store, "calls go through a local limit of " + limit(), waiting);
  }

  private void release(String id, @Nullable Disposable renewal) {
    try {
      if (renewal != null) {
        renewal.dispose();
      }
    } finally {   // the permit comes back whatever the scheduler does on cancel
      synchronized (this) {
        inFlight--;
      }
      giveBack(id);
    }
  }

  /** Gives a permit back to the store; the head asks for one once it is back there, not before. */
  private void giveBack(String id) {
    StoreCallBound.within(Mono.defer(() -> store.release(id)), shared.operationTimeout(), scheduler()).subscribe(null,
        e -> {
          LOG.debug("Concurrency limit '{}': permit {} not released ({}); it comes back when its lease runs out",
              name(), id, e.toString());
          pump();
        }, this::pump);
  }

  private Scheduler scheduler() {
    return settings.scheduler().get();
  }

  private long now() {
    return scheduler().now(TimeUnit.NANOSECONDS);
  }

  @Override
  public String toString() {
    return "ConcurrencyLimit{" + name() + ", shared " + limit() + " in " + store + ", in flight here " + inFlight
        + ", queued " + queued + ", lease " + Durations.format(shared.lease()) + ", "
        + (shared.failOpen() ? "fails open" : "fails closed") + "}";
  }

  /** A call waiting for a permit of the store. */
  private final class Waiter extends Turn {

    @Override
    LimitMetrics metrics() {
      return metrics;
    }
    final long waitNanos;
    /** The store's permit once granted; {@code null} for a call sent to the local fallback. */
    @Nullable volatile String permitId;

    /** The agent task the call belongs to, or {@link TaskShares#NO_TASK}. */
    final Object task;

    Waiter(long waitNanos, Object task) {
      this.waitNanos = waitNanos;
      this.task = task;
    }

    <T> Publisher<T> permitted(Publisher<? extends T> source, boolean mono) {
      String id = permitId;
      if (id == null) {
        return subscriber -> fallback.subscribe(source, Operators.toCoreSubscriber(subscriber), mono);
      }
      return Flux.defer(() -> {
        Duration lease = shared.lease();
        Duration every = lease.dividedBy(3);
        // One-shot delays, not Flux.interval: cancelling a periodic task may park on the scheduler's queue lock,
        // and a call ends (and stops its renewal) on an event loop
        Disposable renewal = Mono.delay(every, scheduler())
            .then(Mono.defer(() -> StoreCallBound.within(store.renew(id, lease), shared.operationTimeout(),
                scheduler()).onErrorReturn(Boolean.TRUE)))
            .repeat()
            .takeUntil(held -> !held)   // a permit the store no longer holds cannot be renewed
            .subscribe(held -> {
              if (!held) {
                LOG.warn("Concurrency limit '{}': the lease of permit {} ran out while its call ran; the call goes "
                    + "on uncounted by the store", name(), id);
              }
            });
        AtomicBoolean released = new AtomicBoolean();
        Runnable once = () -> {
          if (released.compareAndSet(false, true)) {
            release(id, renewal);
          }
        };
        Flux<T> call = Flux.<T>from(source).doOnTerminate(once).doOnCancel(once);
        // a Mono's value is its end: what follows it downstream finds the permit given back
        return mono ? call.doOnNext(v -> once.run()) : call;
      });
    }

    @Override
    void leaveQueue() {
      synchronized (SharedConcurrencyLimit.this) {
        queue.remove(this);
        queued = queue.size();
      }
    }

    @Override
    void returnGrant() {
      String id = permitId;
      if (id != null) {
        release(id, null);
      }
    }

    @Override
    Throwable expired() {
      return new LimitExceededException(name(), Reason.WAITED_TOO_LONG, null, "no permit of " + limit() + " in "
          + store + " came free within " + Durations.format(Duration.ofNanos(waitNanos)) + " (" + inFlight
          + " in flight here, " + queued + " queued here)");
    }
  }
}
