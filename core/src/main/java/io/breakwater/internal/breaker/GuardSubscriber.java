package io.breakwater.internal.breaker;

import io.breakwater.internal.Lift;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * Relays one admitted call and reports its outcome, exactly once, to the phases that admitted it — before the
 * terminal signal goes downstream, so that a retry sees the new state; a {@code Mono}'s before its value, which
 * {@code flatMap} and {@code subscribe(value -> ..)} take as its end. A call is judged by its first element: its
 * time to the first element tells a slow call, and a cancellation after it is a success. The clock is read once per
 * call (at the first element or the end), plus once after subscription for a call still running then, when slow
 * calls are timed.
 */
final class GuardSubscriber<T> implements CoreSubscriber<T>, Subscription, Scannable {

  static final int MONO = 1;
  static final int TOOL_CLAIMED = 2;
  static final int FAMILY_CLAIMED = 4;
  /**
   * A half-open probe (of the tool, the family or both): its time is always read, never sampled, since the phase
   * its outcome ends dates the next (a probe that closes starts the ramp-up), and the latest value sampled may be
   * from before the breaker opened.
   */
  static final int PROBE = 8;
  /** The default value of {@link #start}: no initialiser, so constructing a subscriber costs no fence. */
  private static final long UNTIMED = 0;

  private final CoreSubscriber<? super T> actual;
  private final GuardOperator<?> guard;
  private final Scheduler clock;
  @Nullable private final Phase familyPhase;
  private final Phase toolPhase;
  private final int flags;
  /**
   * When the call was found still running after subscription; {@link #UNTIMED} if it was not (yet). Written once
   * with release semantics (no fence): a completion racing that write on another thread sees it or not, and either
   * way judges the call not slow (untimed, or a start later than its end).
   */
  private volatile long start;
  @SuppressWarnings("rawtypes")
  private static final AtomicLongFieldUpdater<GuardSubscriber> START =
      AtomicLongFieldUpdater.newUpdater(GuardSubscriber.class, "start");

  // set in onSubscribe, which Reactive Streams (rule 1.9) signals before anything that reads it
  @SuppressWarnings("NullAway.Init")
  private Subscription s;
  /** The thread that subscribes: only it reads {@link #subscribing}, which it alone writes. */
  private final Thread subscriber = Thread.currentThread();
  /**
   * True until {@code source.subscribe(this)} returns: signals seen meanwhile on the subscribing thread come from a
   * synchronous call. A signal on another thread is asynchronous by definition, and never reads this plain field
   * (it would have no happens-before edge to its write).
   */
  private boolean subscribing = true;
  /**
   * Whether the first element came; written with release after {@link #firstAt}, so a thread that reads it with
   * acquire (a cancel, {@link #subscribed()}) also sees the time of that element.
   */
  private volatile int first;
  private long firstAt;
  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<GuardSubscriber> FIRST =
      AtomicIntegerFieldUpdater.newUpdater(GuardSubscriber.class, "first");

  private volatile int done;
  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<GuardSubscriber> DONE =
      AtomicIntegerFieldUpdater.newUpdater(GuardSubscriber.class, "done");

  GuardSubscriber(CoreSubscriber<? super T> actual, GuardOperator<?> guard, Scheduler clock,
      @Nullable Phase familyPhase, Phase toolPhase, boolean mono, int claims) {
    this.actual = actual;
    this.guard = guard;
    this.clock = clock;
    this.familyPhase = familyPhase;
    this.toolPhase = toolPhase;
    this.flags = claims | (mono ? MONO : 0);
  }

  /**
   * Called when {@code source.subscribe(this)} has returned: a call that has not produced its first element (nor
   * ended) by then is timed from now. A call that did during subscription ran synchronously and is never slow; this
   * saves the synchronous happy path a clock read.
   */
  void subscribed() {
    subscribing = false;
    if (guard.timesCalls && first == 0 && done == 0) {
      long now = BreakerCore.now(clock);
      START.lazySet(this, now == UNTIMED ? now + 1 : now);
    }
  }

  @Override
  public Context currentContext() {
    return actual.currentContext();
  }

  @Override
  public void onSubscribe(Subscription s) {
    if (Operators.validate(this.s, s)) {
      this.s = s;
      actual.onSubscribe(this);
    }
  }

  @Override
  public void onNext(T t) {
    if (t == null) {
      throw new NullPointerException("onNext(null) in guardedBy(" + guard.tool.name + "): Reactive Streams rule 2.13");
    }
    if (first == 0) {
      long now = time();
      firstAt = now;
      FIRST.lazySet(this, 1);   // release: firstAt is visible to whoever sees first == 1
      if ((flags & MONO) != 0 && DONE.compareAndSet(this, 0, 1)) {
        finish(BreakerCore.SUCCESS, now);   // a Mono's value is its end: what it starts downstream sees the outcome
      }
    }
    actual.onNext(t);
  }

  // NullAway cannot see that the family phase is set exactly when the guard has a family breaker
  @SuppressWarnings("NullAway")
  @Override
  public void onError(Throwable t) {
    if (DONE.compareAndSet(this, 0, 1)) {
      long now = guard.tool.observed(BreakerCore.now(clock));
      if (guard.family != null) {
        guard.family.record(familyPhase, guard.family.familyOutcomeOf(t, actual.currentContext(), now), now,
            latency(now), (flags & FAMILY_CLAIMED) != 0);
      }
      guard.tool.record(toolPhase, guard.tool.outcomeOf(t, now), now, latency(now), (flags & TOOL_CLAIMED) != 0);
      actual.onError(t);
    } else {
      Operators.onErrorDropped(t, actual.currentContext());
    }
  }

  @Override
  public void onComplete() {
    if ((flags & MONO) != 0 && first != 0) {
      actual.onComplete();   // settled by its value
      return;
    }
    if (DONE.compareAndSet(this, 0, 1)) {
      finish(BreakerCore.SUCCESS, endTime());
      actual.onComplete();
    }
  }

  @Override
  public void request(long n) {
    s.request(n);
  }

  @Override
  public void cancel() {
    if (DONE.compareAndSet(this, 0, 1)) {
      s.cancel();
      boolean answered = first != 0;   // a cancel after the first element is a success, timed by that element
      finish(answered ? BreakerCore.SUCCESS : BreakerCore.CANCELLED, answered ? endTime() : 0);
    } else {
      s.cancel();
    }
  }

  /** A Mono's outcome is timed by its element; a stream's by its end, which may be much later. */
  private long endTime() {
    return first != 0 && (flags & MONO) != 0 ? firstAt : time();
  }

  /**
   * The clock, sampled for a synchronous call (see {@link BreakerCore#sampledNow}), read for an asynchronous one and
   * for a probe.
   */
  private long time() {
    return (flags & PROBE) == 0 && Thread.currentThread() == subscriber && subscribing
        ? guard.tool.sampledNow(clock)
        : guard.tool.observed(BreakerCore.now(clock));
  }

  /** Time to the first element, or to {@code end} without one; negative when not timed. */
  private long latency(long end) {
    long started = start;
    if (started == UNTIMED) {
      return -1;
    }
    return (first != 0 ? firstAt : end) - started;
  }

  // NullAway cannot see that the family phase is set exactly when the guard has a family breaker
  @SuppressWarnings("NullAway")
  private void finish(int outcome, long now) {
    long latency = outcome == BreakerCore.CANCELLED ? -1 : latency(now);
    if (guard.family != null) {
      guard.family.record(familyPhase, outcome, now, latency, (flags & FAMILY_CLAIMED) != 0);
    }
    guard.tool.record(toolPhase, outcome, now, latency, (flags & TOOL_CLAIMED) != 0);
  }

  @Override
  @Nullable
  public Object scanUnsafe(Attr key) {
    return key == Attr.NAME ? "guardedBy(" + guard.tool.name + ")" : Lift.scanRelay(key, s, actual, done == 1);
  }
}
