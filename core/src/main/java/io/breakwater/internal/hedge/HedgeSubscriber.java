package io.breakwater.internal.hedge;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.breakwater.failure.FailureClassifier;
import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.Lift;
import io.breakwater.internal.deadline.GatedTimer;
import io.breakwater.internal.deadline.TimerWheel;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * One hedged call: the primary attempt, the hedges a timer starts while no attempt has answered, and the delivery of
 * the winner's signals.
 *
 * <p><b>The race.</b> An attempt <em>answers</em> with its first content item (a {@code Mono}'s value; a stream's
 * first item the content predicate accepts) or by completing. The first to answer wins: the race's {@link #state}
 * goes from {@link #RACING} to the winner's index (or to the call's failure or cancellation) once, by CAS, and
 * the timer is disposed and every other attempt cancelled at once. Items an attempt sends before its first
 * content (framing, heartbeats) are held in its own prefix, up to {@link #MAX_PREFIX}, and only the winner's are
 * delivered. An attempt that fails does not end the call while another is in flight; when the last one in flight
 * fails ({@link #active} drops to zero) the call fails with that error at once, and no hedge starts after that: a
 * hedge is not a retry.
 *
 * <p><b>Hedges.</b> One timer per call, armed by the gate of {@link GatedTimer} once the primary was subscribed (a
 * call that answers during its subscription arms none), re-armed for each further hedge. The timer is this
 * subscriber, filed in the same {@link TimerWheel} as deadlines: arming and cancelling it costs a few pointer writes,
 * not a task on the scheduler. When it fires, the hedge reserves a place among the attempts in flight (refused once
 * the call is failing), takes a token from the policy's budget (refused: no more hedges for this call), and subscribes
 * to the source again or to its alternate.
 *
 * <p><b>Delivery.</b> Before the race is decided attempts are asked for one item at a time, whatever the downstream
 * demand. The winner's prefix and first content item are then drained under the downstream demand; after that,
 * demand goes straight to the winner and its signals straight downstream.
 */
final class HedgeSubscriber<T> extends TimerWheel.Timer<T> implements Scannable {

  static final int RACING = -1;
  static final int FAILED = -2;
  static final int CANCELLED = -3;
  /** Items an attempt may send before its first content item. */
  static final int MAX_PREFIX = 256;

  /** The operator: its policy, alternates and content test. */
  final HedgeOperator<T> operator;
  @Nullable
  final Predicate<? super T> isContent;
  final boolean mono;
  final Context context;
  final Attempt<T> primary;
  private final Publisher<? extends T> source;
  private final Scheduler scheduler;
  /** The delay between hedges, in nanoseconds; negative: no hedging for this call. */
  private final long step;
  /**
   * The wheel the hedge timer is filed in (the subscribing thread's for the scheduler), or {@code null} when the call
   * does not hedge. Its lock orders filing the timer with disposing it: see {@link #arm}.
   */
  @Nullable
  private final TimerWheel wheel;
  /** The primary attempt is being subscribed; written and read on the subscribing thread only. */
  private boolean primaryStarted;

  @Nullable
  private volatile AtomicReferenceArray<Attempt<T>> hedges;
  private volatile boolean refused;
  /**
   * When the call started on the scheduler's clock, for the hedge timer, events and the primary's latency: read only
   * when the call hedges or times its latency, which is when it is set.
   */
  private long startNanos;


  /** Attempts in flight, plus one while the timer is starting a hedge. */
  private volatile int active = 1;
  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<HedgeSubscriber> ACTIVE =
      AtomicIntegerFieldUpdater.newUpdater(HedgeSubscriber.class, "active");

  private volatile int failures;
  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<HedgeSubscriber> FAILURES =
      AtomicIntegerFieldUpdater.newUpdater(HedgeSubscriber.class, "failures");

  @Nullable
  private volatile Throwable lastError;

  private volatile long requested;
  @SuppressWarnings("rawtypes")
  private static final AtomicLongFieldUpdater<HedgeSubscriber> REQUESTED =
      AtomicLongFieldUpdater.newUpdater(HedgeSubscriber.class, "requested");

  // read and written only through WIP, which Error Prone's UnusedVariable does not follow
  @SuppressWarnings("UnusedVariable")
  private volatile int wip;
  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<HedgeSubscriber> WIP =
      AtomicIntegerFieldUpdater.newUpdater(HedgeSubscriber.class, "wip");

  // Delivery state. head, content and error are written before the volatile won / done that publish them.
  @Nullable
  private ArrayDeque<T> head;
  @Nullable
  private T content;
  @Nullable
  private Throwable error;
  @Nullable
  private volatile Attempt<T> won;
  private volatile boolean done;
  private volatile boolean passthrough;
  private static final VarHandle DONE;
  private static final VarHandle PASSTHROUGH;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      DONE = lookup.findVarHandle(HedgeSubscriber.class, "done", boolean.class);
      PASSTHROUGH = lookup.findVarHandle(HedgeSubscriber.class, "passthrough", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }
  private volatile boolean cancelled;
  /** Touched inside the drain loop only. */
  private long emitted;
  private long forwarded;
  private boolean terminated;

  HedgeSubscriber(CoreSubscriber<? super T> actual, HedgeOperator<T> operator, Publisher<? extends T> source,
      Scheduler scheduler, long step, boolean mono) {
    super(actual);
    this.operator = operator;
    this.isContent = mono ? null : operator.isContent;
    this.source = source;
    this.scheduler = scheduler;
    this.step = step;
    this.wheel = step >= 0 ? TimerWheel.of(scheduler) : null;
    this.mono = mono;
    this.context = actual.currentContext().put(ContextKeys.HEDGED, Boolean.TRUE);
    this.primary = new Attempt<>(this, 0);
    this.state = RACING;
  }

  /**
   * Subscribes the primary attempt (this subscriber has been passed down already), then the arming gate arms the hedge
   * timer unless the call has already answered.
   */
  void start() {
    if (state != RACING) {
      return;
    }
    if (operator.policy.latency != null || step >= 0) {
      long now = scheduler.now(TimeUnit.NANOSECONDS);
      startNanos = now;
      primary.startNanos = now;
    }
    primaryStarted = true;
    downstreamSubscribed();
    Lift.subscribeUpstream(source, primary);
    sourceReturned();
  }

  /** Called by the arming gate (see {@link GatedTimer}): the first hedge is due {@code step} after the call started. */
  @Override
  protected void arm() {
    if (step >= 0 && state == RACING) {
      armFrom(startNanos);
    }
  }

  /**
   * Files the timer for {@code step} after {@code from}; cancels it again if the race was decided meanwhile. The
   * filing and {@link #releaseTimer} take the wheel's lock, and the race is decided before the timer is disposed: so
   * either the disposal finds the timer filed, or the filing is followed by the read below that sees the decision.
   */
  private void armFrom(long from) {
    long at = from + step;
    try {
      Objects.requireNonNull(wheel).file(this, at < from ? Long.MAX_VALUE : at, scheduler);
    } catch (RejectedExecutionException rejected) {
      return; // a disposed scheduler: the call goes on without hedges
    }
    if (state != RACING) {
      releaseTimer();   // decided while filing: the winner's cancellation may have missed the filing
    }
  }

  @Override
  protected void releaseTimer() {
    TimerWheel w = wheel;
    if (w != null) {
      w.release(this, step <= TimerWheel.KEEP_HORIZON);
    }
  }

  /** The timer fired: start the next hedge if the call is still racing and the budget allows. */
  @Override
  protected void expire(long now) {
    if (state != RACING) {
      return;
    }
    if (!reserve()) {
      return;
    }
    if (!operator.policy.budget.tryAcquire()) {
      refused = true;
      operator.policy.metrics.refusals.increment();
      release();
      return;
    }
    int k = started() + 1;
    Attempt<T> hedge = new Attempt<>(this, k);
    hedge.startNanos = now;
    AtomicReferenceArray<Attempt<T>> all = hedges;
    if (all == null) {
      all = new AtomicReferenceArray<>(operator.policy.maxHedges());
      hedges = all;
    }
    all.set(k - 1, hedge);
    operator.policy.metrics.started.increment();
    Publisher<? extends T> target;
    try {
      List<Supplier<? extends Publisher<T>>> alternates = operator.alternates;
      target = alternates.isEmpty() ? source : Objects.requireNonNull(
          alternates.get((k - 1) % alternates.size()).get(), "an alternate of hedgedBy supplied null");
    } catch (Throwable e) {
      hedge.ended = true;
      attemptFailed(Operators.onOperatorError(e, context));
      return;
    }
    Lift.subscribeUpstream(target, hedge);
    int w = state;
    if (w != RACING && w != k) {
      // the race was decided while the hedge was being subscribed: counted here unless the winner's cancellation of
      // the others, which sees the hedge once it is in hedges, got to it first
      if (hedge.terminate() && w >= 0) {
        operator.policy.metrics.cancelled.increment();
      }
    } else if (w == RACING && k < operator.policy.maxHedges()) {
      armFrom(now);
    }
  }

  /** The hedges started: those in {@link #hedges}, which only the timer adds to, in order. */
  private int started() {
    AtomicReferenceArray<Attempt<T>> all = hedges;
    int k = 0;
    while (all != null && k < all.length() && all.get(k) != null) {
      k++;
    }
    return k;
  }

  private boolean reserve() {
    for (;;) {
      int a = active;
      if (a == 0) {
        return false;
      }
      if (ACTIVE.compareAndSet(this, a, a + 1)) {
        return true;
      }
    }
  }

  /** An attempt (or a hedge being started) left the race without answering. */
  private void release() {
    if (ACTIVE.decrementAndGet(this) == 0 && claim(RACING, FAILED)) {
      releaseTimer();
      Throwable e = lastError;
      error = e != null ? e : new IllegalStateException("hedgedBy(" + operator.policy.name() + "): no attempt answered");
      done = true;
      event("failed", -1, e);
      drain();
    }
  }

  void attemptFailed(Throwable e) {
    lastError = e;
    FAILURES.incrementAndGet(this);
    release();
  }

  /** {@code attempt} answered first: with {@code value}, or by completing ({@code null}). */
  void win(Attempt<T> attempt, @Nullable T value) {
    if (!claim(RACING, attempt.index)) {
      if (value != null) {
        Operators.onDiscard(value, context);
      }
      attempt.discardPrefix();
      return;
    }
    releaseTimer();
    int losers = cancelAll(attempt);
    if (operator.policy.latency != null) {
      operator.policy.latency.record(scheduler.now(TimeUnit.NANOSECONDS) - attempt.startNanos);
    }
    if (attempt.index > 0) {
      operator.policy.metrics.won.increment();
    }
    if (losers > 0) {
      operator.policy.metrics.cancelled.increment(losers);
    }
    head = attempt.takeOwnPrefix();
    content = value;
    won = attempt;
    if (value == null || mono) {
      // A Mono's value is its answer: it is delivered with the completion, in one pass; the source's own completion
      // (or a protocol-breaking error) after it finds the call done. Published by the drain's atomic step below.
      DONE.setRelease(this, true);
    }
    event("won", attempt.index, null);
    drain();
  }

  /** The winner ended: {@code e} or completion. */
  void winnerTerminated(@Nullable Throwable e) {
    if (done) {   // a Mono's value has completed the call already
      if (e != null) {
        Operators.onErrorDropped(e, context);
      }
      return;
    }
    error = e;
    DONE.setRelease(this, true);   // the drain's atomic step publishes it; won, read with it, is set already
    drain();
  }

  /** Cancels every attempt but {@code except}; returns how many of them were still in flight and not cancelled yet. */
  private int cancelAll(@Nullable Attempt<T> except) {
    int live = cancelOne(primary, except);
    AtomicReferenceArray<Attempt<T>> all = hedges;
    if (all != null) {
      for (int i = 0; i < all.length(); i++) {
        Attempt<T> a = all.get(i);
        if (a != null) {
          live += cancelOne(a, except);
        }
      }
    }
    return live;
  }

  private static <T> int cancelOne(Attempt<T> a, @Nullable Attempt<T> except) {
    if (a == except) {
      return 0;
    }
    boolean live = !a.ended;
    boolean first = a.terminate();
    return live && first ? 1 : 0;
  }

  private Attempt<T> attempt(int index) {
    return index == 0 ? primary : Objects.requireNonNull(hedges).get(index - 1);
  }

  @Override
  public void request(long n) {
    if (!Operators.validate(n)) {
      return;
    }
    if (passthrough) {
      if (!mono) {
        Objects.requireNonNull(won).request(n);
      }
      return;
    }
    if (!primaryStarted && subscribingHere()) {
      // Downstream's onSubscribe, before the primary is subscribed: no attempt exists yet, so nothing reads the demand
      // or adds to it concurrently; whatever subscribes an attempt later publishes it.
      REQUESTED.lazySet(this, Operators.addCap(requested, n));
      return;
    }
    Operators.addCap(REQUESTED, this, n);
    // Before the race is decided there is nothing to deliver: whoever decides it (setting won or done, or cancelling)
    // drains after, reading the demand added here; an atomic step lies between each write and the read after it.
    if (won != null || done || cancelled) {
      drain();
    }
  }

  @Override
  public Context currentContext() {
    return context;
  }

  @Override
  public void cancel() {
    if (cancelled) {
      return;
    }
    cancelled = true;
    if (claim(RACING, CANCELLED)) {
      releaseTimer();
      cancelAll(null);
      event("cancelled", -1, null);
    } else {
      int w = state;
      if (w >= 0) {
        attempt(w).cancel();
      }
    }
    drain();
  }

  private void drain() {
    if (WIP.getAndIncrement(this) != 0) {
      return;
    }
    int missed = 1;
    for (;;) {
      if (cancelled) {
        discardHead();
      } else if (!terminated) {
        boolean d = done;   // read before won: won is written first
        Attempt<T> w = won;
        if (w == null) {
          if (d) {
            terminated = true;
            actual.onError(Objects.requireNonNull(error));
          }
        } else if (!passthrough) {
          deliverHead(w, d);
        } else {
          forward(w);
          if (d) {
            terminate();
          }
        }
      }
      if (terminated) {
        // Nothing is left to deliver, discard or forward: the drain is kept, and every later one returns at once.
        return;
      }
      missed = WIP.addAndGet(this, -missed);
      if (missed == 0) {
        return;
      }
    }
  }

  /** Drains the winner's prefix and first content item under the demand; then hands the demand to the winner. */
  private void deliverHead(Attempt<T> w, boolean d) {
    long r = requested;
    long e = emitted;
    ArrayDeque<T> h = head;
    while (e != r && h != null && !h.isEmpty() && !cancelled) {
      actual.onNext(h.poll());
      e++;
    }
    boolean prefixDrained = h == null || h.isEmpty();
    if (prefixDrained && content != null && e != r && !cancelled) {
      T c = content;
      content = null;
      actual.onNext(c);
      e++;
    }
    emitted = e;
    if (!prefixDrained || content != null || cancelled) {
      return;
    }
    head = null;
    if (d) {
      terminate();
      return;
    }
    forwarded = r;
    PASSTHROUGH.setRelease(this, true);   // a request() that misses it adds its demand and drains: forward() passes it
    if (!mono && r != e) {
      w.request(r == Long.MAX_VALUE ? Long.MAX_VALUE : r - e);
    }
  }

  /** Passes to the winner the demand that arrived while the head was being drained. */
  private void forward(Attempt<T> w) {
    long r = requested;
    if (r != forwarded && !mono) {
      long n = r == Long.MAX_VALUE ? Long.MAX_VALUE : r - forwarded;
      forwarded = r;
      w.request(n);
    }
  }

  private void terminate() {
    terminated = true;
    Throwable e = error;
    if (e != null) {
      actual.onError(e);
    } else {
      actual.onComplete();
    }
  }

  private void discardHead() {
    ArrayDeque<T> h = head;
    head = null;
    if (h != null) {
      Operators.onDiscardMultiple(h, context);
    }
    T c = content;
    content = null;
    if (c != null) {
      Operators.onDiscard(c, context);
    }
  }

  /** One JSON event per hedged call: one whose first hedge was due while it was racing. */
  private void event(String outcome, int winnerIndex, @Nullable Throwable e) {
    int k = started();
    boolean budgetRefused = refused;
    if ((k == 0 && !budgetRefused) || !operator.policy.events.enabled()) {
      return;
    }
    ObjectNode event = operator.policy.events.event();
    event.put("event", "hedged_call");
    event.put("hedge", operator.policy.name());
    event.put("outcome", outcome);
    if (winnerIndex >= 0) {
      event.put("winner", winnerIndex == 0 ? "primary" : "hedge-" + winnerIndex);
    } else {
      event.putNull("winner");
    }
    event.put("hedges_started", k);
    event.put("budget_refused", budgetRefused);
    event.put("attempts_failed", failures);
    event.put("delay_ms", step / 1e6);
    event.put("duration_ms", (scheduler.now(TimeUnit.NANOSECONDS) - startNanos) / 1e6);
    if (e != null) {
      event.put("failure_kind", FailureClassifier.defaults().classify(e).tag());
    }
    operator.policy.events.emit(event);
  }

  @Override
  @Nullable
  public Object scanUnsafe(Attr key) {
    if (key == Attr.ACTUAL) {
      return actual;
    }
    if (key == Attr.PARENT) {
      return primary;
    }
    if (key == Attr.CANCELLED) {
      return cancelled;
    }
    if (key == Attr.TERMINATED) {
      return terminated;
    }
    if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
      return requested;
    }
    if (key == Attr.RUN_STYLE) {
      return Attr.RunStyle.ASYNC;
    }
    if (key == Attr.NAME) {
      return "hedgedBy(" + operator.policy.name() + ")";
    }
    return null;
  }

  /** One attempt of the call: its upstream subscription, its prefix until it answers, and its start time. */
  static final class Attempt<T> implements CoreSubscriber<T>, Subscription, Scannable {

    final HedgeSubscriber<T> parent;
    final int index;
    long startNanos;
    /**
     * Items before the first content item, until it wins, fails or is cancelled; guarded by {@code this}, as the
     * attempt's signals add to it while a cancellation from another thread may discard it.
     */
    @Nullable
    private ArrayDeque<T> prefix;
    /** Failed (or could not start): no longer in flight. */
    volatile boolean ended;
    /** This attempt's source has signalled its end; anything after is a protocol violation, dropped. */
    private boolean done;

    @Nullable
    private volatile Subscription s;
    @SuppressWarnings("rawtypes")
    private static final AtomicReferenceFieldUpdater<Attempt, Subscription> S =
        AtomicReferenceFieldUpdater.newUpdater(Attempt.class, Subscription.class, "s");

    Attempt(HedgeSubscriber<T> parent, int index) {
      this.parent = parent;
      this.index = index;
    }

    @Override
    public Context currentContext() {
      return parent.context;
    }

    @Override
    public void onSubscribe(Subscription s) {
      if (Operators.setOnce(S, this, s)) {
        s.request(parent.mono ? Long.MAX_VALUE : 1);
      }
    }

    @Override
    public void onNext(T t) {
      if (t == null) {
        throw new NullPointerException("onNext(null) in hedgedBy(" + parent.operator.policy.name()
            + "): Reactive Streams rule 2.13");
      }
      HedgeSubscriber<T> p = parent;
      if (done) {
        Operators.onNextDropped(t, p.context);
        return;
      }
      int w = p.state;
      if (w == index) {
        if (p.passthrough) {
          p.actual.onNext(t);
        } else {
          Operators.onDiscard(t, p.context);
          cancel();
          p.winnerTerminated(Exceptions.failWithOverflow("hedgedBy(" + p.operator.policy.name()
              + "): the winning attempt sent an item that was not requested"));
        }
        return;
      }
      if (w != RACING) {
        Operators.onDiscard(t, p.context);
        discardPrefix();
        return;
      }
      boolean answer;
      try {
        answer = p.isContent == null || p.isContent.test(t);
      } catch (Throwable e) {
        Throwable error = Operators.onOperatorError(s, e, t, p.context);
        ended = true;
        discardPrefix();
        p.attemptFailed(error);
        return;
      }
      if (answer) {
        p.win(this, t);
        return;
      }
      int held;
      synchronized (this) {
        if (s == Operators.cancelledSubscription()) {
          held = -1;   // cancelled: its prefix is discarded already
        } else {
          ArrayDeque<T> q = prefix;
          if (q == null) {
            q = new ArrayDeque<>();
            prefix = q;
          }
          held = q.size();
          if (held < MAX_PREFIX) {
            q.add(t);
          }
        }
      }
      if (held < 0) {
        Operators.onDiscard(t, p.context);
        return;
      }
      if (held >= MAX_PREFIX) {
        Operators.onDiscard(t, p.context);
        cancel();
        ended = true;
        discardPrefix();
        p.attemptFailed(new IllegalStateException("hedgedBy(" + p.operator.policy.name() + "): attempt " + index
            + " sent " + MAX_PREFIX + " items before its first content item; check the content predicate"));
        return;
      }
      Objects.requireNonNull(s).request(1);
    }

    @Override
    public void onError(Throwable t) {
      Objects.requireNonNull(t, "onError(null): Reactive Streams rule 2.13");
      HedgeSubscriber<T> p = parent;
      if (done) {
        Operators.onErrorDropped(t, p.context);
        return;
      }
      done = true;
      int w = p.state;
      if (w == index) {
        p.winnerTerminated(t);
      } else if (w == RACING) {
        ended = true;
        discardPrefix();
        p.attemptFailed(t);
      }
      // otherwise this attempt lost, or the call ended: its error says nothing about the answer
    }

    @Override
    public void onComplete() {
      if (done) {
        return;
      }
      done = true;
      HedgeSubscriber<T> p = parent;
      int w = p.state;
      if (w == index) {
        p.winnerTerminated(null);
      } else if (w == RACING) {
        p.win(this, null);
      }
    }

    @Override
    public void request(long n) {
      Subscription current = s;
      if (current != null) {
        current.request(n);
      }
    }

    /**
     * Cancels this attempt; what its source throws from {@code cancel} (rule 3.15 says it must not) is dropped, so that
     * the other losers are still cancelled and the winner's answer still delivered.
     */
    @Override
    public void cancel() {
      terminate();
    }

    /**
     * {@link #cancel}, telling whether it was this call that cancelled the attempt, subscribed or not yet (an
     * earlier call did not).
     */
    boolean terminate() {
      Subscription cancelled = Operators.cancelledSubscription();
      Subscription current = S.getAndSet(this, cancelled);
      if (current == cancelled) {
        return false;
      }
      if (current != null) {
        Lift.cancelUpstream(current, parent.context);
      }
      discardPrefix();   // a loser that stops when cancelled sends nothing more that would discard it
      return true;
    }

    /** The winner's prefix, handed to the call once; {@code null} if it had none or it was discarded. */
    @Nullable
    synchronized ArrayDeque<T> takePrefix() {
      ArrayDeque<T> q = prefix;
      prefix = null;
      return q;
    }

    /**
     * {@link #takePrefix()} from this attempt's own signal, without the lock when it holds none (a call answered by
     * its first item, the usual case): only this attempt's signals give it a prefix, so null seen here is null.
     */
    @Nullable
    ArrayDeque<T> takeOwnPrefix() {
      return prefix == null ? null : takePrefix();
    }

    void discardPrefix() {
      ArrayDeque<T> q = takePrefix();
      if (q != null) {
        Operators.onDiscardMultiple(q, parent.context);
      }
    }

    @Override
    @Nullable
    public Object scanUnsafe(Attr key) {
      if (key == Attr.PARENT) {
        return s;
      }
      if (key == Attr.ACTUAL) {
        return parent;
      }
      if (key == Attr.CANCELLED) {
        return s == Operators.cancelledSubscription();
      }
      if (key == Attr.RUN_STYLE) {
        return Attr.RunStyle.SYNC;
      }
      if (key == Attr.NAME) {
        return "hedgedBy(" + parent.operator.policy.name() + ")#" + index;
      }
      return null;
    }
  }
}
