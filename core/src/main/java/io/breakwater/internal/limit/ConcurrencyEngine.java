package io.breakwater.internal.limit;

import io.breakwater.internal.Durations;
import io.breakwater.internal.Lift;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.LimitExceededException.Reason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.ContextView;

/**
 * What every {@link ConcurrencyLimit} is underneath, in memory or shared: one admission and queue engine
 * ({@link LimitQueue}) over a {@link ConcurrencyStore}, the only thing that differs ({@link #local}, {@link #shared});
 * {@code limitedBy} accepts nothing else. While nobody waits, a call takes a permit without a lock (in memory: one
 * atomic increment; a shared store never answers at once). Otherwise a call that may not wait is refused at once by
 * an in-memory store; the others join a FIFO, bounded by the deadline in force and {@code maxWait}, whose head asks
 * again whenever a permit comes back (and every {@code pollInterval} for a shared store). A waiting call counts itself
 * queued before it asks, and a permit that comes back looks at the queue after it is free, so a permit is never left
 * free while a call waits for it. The permit goes back exactly once, when the call ends or is cancelled.
 */
public final class ConcurrencyEngine extends LimitQueue<ConcurrencyEngine.Waiter, String>
    implements ConcurrencyLimit {

  private final ConcurrencySettings settings;
  private final ConcurrencyStore store;
  /** Where the calls go while a shared store does not answer and the limit fails open; {@code null} in memory. */
  @Nullable
  private final ConcurrencyEngine fallback;
  private final long maxWaitNanos;

  /** The FIFO of waiting calls; guarded by {@code this}. */
  @Nullable
  private Waiter head;
  @Nullable
  private Waiter tail;
  private int size;
  private volatile int queued;
  /** The waiting calls of each task; guarded by {@code this}. */
  private final TaskShares shares;

  private final LimitMetrics metrics;

  /** {@code storeOf}: the store, given what it runs once a permit is back (the queue's head asks for it). */
  private ConcurrencyEngine(ConcurrencySettings settings, Function<Runnable, ConcurrencyStore> storeOf,
      @Nullable ConcurrencyEngine fallback) {
    this.settings = settings;
    this.store = storeOf.apply(this::wakeQueue);
    this.fallback = fallback;
    this.maxWaitNanos = settings.maxWaitNanos();
    this.shares = new TaskShares(settings.maxQueuePerTask());
    this.metrics = LimitMetrics.of(this, settings.meterRegistry());
  }

  /** The in-memory concurrency limit. */
  public static ConcurrencyEngine local(ConcurrencySettings settings) {
    return new ConcurrencyEngine(settings, released -> new LocalPermits(settings, released), null);
  }

  /**
   * A concurrency limit whose permits live in {@code store}, shared by every instance; when the store does not
   * answer, a limit that fails open runs the waiting calls through an in-memory limit of the same size.
   */
  public static ConcurrencyEngine shared(ConcurrencySettings settings, SharedSettings shared, PermitStore store) {
    if (settings.adaptive() != null) {
      throw new IllegalArgumentException("Shared concurrency limit '" + settings.name() + "' is adaptive: a shared "
          + "limit is fixed; give it a limit, or keep an adaptive limit per instance");
    }
    return new ConcurrencyEngine(settings, released -> new SharedPermits(settings, shared, store, released),
        local(settings));
  }

  /** The limit's settings: a shared limit built from this one as a template takes them. */
  public ConcurrencySettings settings() {
    return settings;
  }

  @Override
  public String name() {
    return settings.name();
  }

  @Override
  public int limit() {
    return store.limit();
  }

  @Override
  public int inFlight() {
    return fallback == null ? store.inFlight() : store.inFlight() + fallback.inFlight();
  }

  @Override
  public int queued() {
    return fallback == null ? queued : queued + fallback.queued();
  }

  @Override
  Scheduler scheduler() {
    return settings.scheduler().get();
  }

  /**
   * Subscribes {@code actual} to {@code source} once a permit is held, or fails it with a
   * {@link LimitExceededException} without subscribing {@code source}. The permit is given back, exactly once, when
   * the call terminates or is cancelled.
   */
  public <T> void subscribe(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono) {
    if (queued == 0 && store.tryAcquire()) {
      Lift.subscribeUpstream(source, store.holder(actual, mono));
      return;
    }
    ContextView ctx = actual.currentContext();
    long wait = waitNanos(ctx, maxWaitNanos);
    Waiter waiter = new Waiter(wait, TaskShares.taskOf(ctx));
    if (!waiter.waits() && store.answersAtOnce()) {
      LimitExceededException refusal = new LimitExceededException(name(), Reason.WOULD_WAIT_TOO_LONG, null,
          "all " + limit() + " permits" + store.where() + " are taken and " + whyNotQueued(wait));
      metrics.refused(refusal);
      Operators.error(actual, refusal);
      return;
    }
    waiter.run(actual, () -> enqueue(waiter), () -> waiter.permitted(source, mono));
  }

  private String whyNotQueued(long wait) {
    return wait <= 0 && maxWaitNanos > 0 && settings.maxQueue() > 0 ? "the deadline in force has passed"
        : "it does not queue calls";
  }

  /** Queues {@code waiter} unless the queue or its task's share is full: the refusal then. Guarded by this. */
  @Override
  @Nullable
  LimitExceededException admit(Waiter waiter) {
    if (!waiter.waits() && head != null) {
      return new LimitExceededException(name(), Reason.WOULD_WAIT_TOO_LONG, null, "calls already wait for a permit"
          + store.where() + " and " + whyNotQueued(waiter.waitNanos));
    }
    if (size >= Math.max(1, settings.maxQueue())) {
      return new LimitExceededException(name(), Reason.QUEUE_FULL, null, size + " calls already wait for a permit"
          + store.where());
    }
    if (shares.full(waiter.task)) {
      return TaskShares.full(name(), settings.maxQueuePerTask(), settings.maxQueue());
    }
    link(waiter);
    return null;
  }

  /** Runs the queue after a permit came back. */
  private void wakeQueue() {
    if (queued != 0) {
      pump();
    }
  }

  @Override
  @Nullable
  Waiter first() {
    while (head != null && !head.isWaiting()) {
      unlink(head);
    }
    return head;
  }

  @Override
  List<Waiter> drain() {
    List<Waiter> waiting = new ArrayList<>();
    for (Waiter w = head; w != null; w = head) {
      unlink(w);
      waiting.add(w);
    }
    return waiting;
  }

  @Override
  @Nullable
  String ask(Waiter head, Consumer<String> later, StoreOutage.Unreachable unreachable) {
    return store.take(later, unreachable);
  }

  @Override
  boolean answered(Waiter asked, String permit) {
    if (permit.isEmpty()) {
      return noPermit(asked);
    }
    boolean granted;
    synchronized (this) {
      answerCame();
      asked.permit = permit;   // before the grant: a caller leaving right after it gives this permit back
      granted = asked.grant();
      if (granted) {
        unlink(asked);
        store.granted(permit);
      }
    }
    if (!granted) {
      store.giveBack(permit);   // the caller left while the permit was on its way; its return wakes the queue
      return false;
    }
    asked.deliver();
    return true;
  }

  private boolean noPermit(Waiter asked) {
    boolean again;
    synchronized (this) {
      again = answerCame();
      if (asked.waits() && head != null && store.pollNanos() != Long.MAX_VALUE) {
        askAgainIn(store.pollNanos());
      }
    }
    if (!asked.waits()) {
      leave(asked);
      asked.fail(new LimitExceededException(name(), Reason.WOULD_WAIT_TOO_LONG, null, "all " + limit()
          + " permits" + store.where() + " are taken and " + whyNotQueued(asked.waitNanos)));
      return true;
    }
    return again;
  }

  @Override
  void unreachable(@Nullable Throwable error, List<Waiter> waiting) {
    store.unreachable(error, waiting);
  }

  private synchronized void leave(Waiter waiter) {
    unlink(waiter);
  }

  /** Guarded by {@code this}. */
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
    queued = ++size;
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
    queued = --size;
  }

  @Override
  public String toString() {
    return store.describe(queued);
  }

  /** A call waiting for a permit; linked in the FIFO while it waits. */
  final class Waiter extends Turn {

    /** The agent task the call belongs to, or {@link TaskShares#NO_TASK}. */
    final Object task;
    @Nullable Waiter prev;
    @Nullable Waiter next;
    boolean linked;
    /** The store's permit once granted; {@code null} for a call sent to the local fallback. */
    @Nullable volatile String permit;

    Waiter(long waitNanos, Object task) {
      super(waitNanos, settings.maxQueue() > 0);
      this.task = task;
    }

    @Override
    LimitMetrics metrics() {
      return metrics;
    }

    <T> Publisher<T> permitted(Publisher<? extends T> source, boolean mono) {
      String held = permit;
      ConcurrencyEngine local = fallback;
      if (held == null && local != null) {
        return subscriber -> local.subscribe(source, Operators.toCoreSubscriber(subscriber), mono);
      }
      return store.holding(held != null ? held : LocalPermits.PERMIT, source, mono);
    }

    @Override
    void leaveQueue() {
      leave(this);
    }

    @Override
    void returnGrant() {
      String held = permit;
      if (held != null) {
        store.release(held);
      }
    }

    @Override
    Throwable expired() {
      return new LimitExceededException(name(), Reason.WAITED_TOO_LONG, null, "no permit of " + limit()
          + store.where() + " came free within " + Durations.format(Duration.ofNanos(waitNanos)) + " ("
          + store.inFlight() + " in flight, " + queued + " queued)");
    }
  }
}
