package io.breakwater.internal.deadline;

import io.breakwater.deadline.Deadline;
import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.Lift;
import io.breakwater.internal.Saturating;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * Relays signals until the deadline passes, then cancels upstream and signals
 * {@link io.breakwater.deadline.DeadlineExceededException} (a {@link io.breakwater.deadline.CallTimeoutException} for
 * a call's deadline).
 *
 * <p>One timer per call, armed by the gate of {@link GatedTimer} (whose contract it keeps) once both the
 * subscription of the source has returned and {@code onSubscribe} has been passed down: a chain that completes
 * synchronously (the common case for cached and in-memory calls) never arms one. Timers live in a
 * {@link TimerWheel}, not on the scheduler one by one.
 *
 * <p>Nested deadlines of one call share one timer: the outermost deadline on a scheduler puts its subscriber in the
 * Context, and a tighter deadline below it (the per-call budget of an attempt, an inner {@code withDeadline})
 * waits on that subscriber's timer instead of filing its own. The timer is filed for the earlier of the two instants;
 * when it fires it decides which deadline passed: the outer one if its instant has come (it cancels everything below
 * it), else the nested one, after which it is filed again for the outer deadline. A nested deadline that ends leaves
 * the timer where it is (it fires early at worst, and is filed again). Only one nested deadline shares the timer at
 * a time; another one alongside it (e.g. in a {@code flatMap}) files its own.
 *
 * <p>The timer and {@code onNext} are serialised by a small state machine, so the error is never signalled while an
 * item is being delivered. A {@code Mono}'s item meets the deadline: it claims the end of the call in one atomic step
 * and releases the timer before it is delivered, and the completion after it passes through.
 *
 * <p>What an asynchronous call costs: one clock read (none for a deadline subscribed inside its enclosing deadline's
 * subscription, see {@link #startIfSubscribingHere}), one lock to file the timer, one CAS to claim the end (a
 * {@code Mono}), one lock to unfile it. The wheel is chosen when the subscriber is made, so its lock alone orders the
 * filing with the end. The arming gate takes no atomic step when {@code onSubscribe} comes inside the subscription, on
 * the subscribing thread.
 */
final class DeadlineSubscriber<T> extends TimerWheel.Timer<T>
    implements CoreSubscriber<T>, Subscription, Scannable, Runnable {

  // The states beyond GatedTimer's LIVE, ANSWERED (a Mono's item met the deadline) and ENDED:
  /** An item is being delivered ({@code onNext} of a {@code Flux}). */
  private static final int EMITTING = 3;
  /** The timer fired during {@code onNext}; the emitting thread signals the error when it returns. */
  private static final int EXPIRED_WHILE_EMITTING = 4;

  /** The Context key of the outermost deadline's subscriber, whose timer tighter deadlines below it share. */
  private static final Object SHARED_TIMER = new Object() {
    @Override
    public String toString() {
      return "breakwater.deadlineTimer";
    }
  };

  private final Deadline deadline;
  private final long expiresAt;
  /** The instant the deadline started, or {@link TimerWheel#NONE} when its expiry saturated. */
  private final long startNanos;
  /** Whether its budget is within {@link TimerWheel#KEEP_HORIZON}: its slot may keep its task once it is released. */
  private final boolean near;
  private final Context context;
  /** The enclosing deadline whose timer this one shares when it can, or {@code null}. */
  @Nullable private final DeadlineSubscriber<?> enclosing;
  /** Whether upstream is a {@code Mono}: its item meets the deadline (see {@link #ANSWERED}). */
  private final boolean mono;
  // This subscriber's timer. Its filing is changed only under the lock of its wheel, the one lock a filing takes.
  /**
   * The wheel this subscriber's timer is filed in: the subscribing thread's for the deadline's scheduler, or the
   * enclosing deadline's. Its lock orders a filing with the end of the call: a filing reads the state under it, and
   * the end, once the state is changed, takes it to unfile the timer; so either the filing sees the end or the end
   * sees the filing.
   */
  private final TimerWheel wheel;
  /**
   * A nested deadline that could not share its enclosing deadline's timer files its own: written (a volatile write,
   * before the filing takes the lock and reads the state) so that its end, which reads it after changing the state,
   * takes the lock to unfile it. A deadline without an enclosing one always files its own and does not read it.
   */
  private volatile boolean ownTimer;
  /** This deadline waits on its own timer. Guarded by the wheel's lock. */
  private boolean armed;
  /** This deadline is over: its timer is unfiled and takes no nested deadline any more. Guarded by the wheel's lock. */
  private boolean released;
  /** The nested deadline sharing the timer: set under the wheel's lock, cleared (CAS) when it ends or on firing. */
  @Nullable private volatile DeadlineSubscriber<?> nested;
  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<DeadlineSubscriber, DeadlineSubscriber> NESTED =
      AtomicReferenceFieldUpdater.newUpdater(DeadlineSubscriber.class, DeadlineSubscriber.class, "nested");

  DeadlineSubscriber(CoreSubscriber<? super T> actual, Deadline deadline) {
    this(actual, deadline, Saturating.nanos(deadline.budget()), false,
        sharedTimer(actual.currentContext(), deadline.scheduler()));
  }

  /**
   * @param shared the subscriber of the outermost deadline on {@code deadline}'s scheduler, found in
   *     {@code actual}'s Context by {@link #sharedTimer}, or {@code null}
   */
  DeadlineSubscriber(CoreSubscriber<? super T> actual, Deadline deadline, long budgetNanos, boolean mono,
      @Nullable DeadlineSubscriber<?> shared) {
    super(actual);
    this.deadline = deadline;
    this.mono = mono;
    this.expiresAt = deadline.expiresAtNanos();
    this.startNanos = expiresAt == Long.MAX_VALUE ? TimerWheel.NONE : expiresAt - budgetNanos;
    this.near = budgetNanos <= TimerWheel.KEEP_HORIZON;
    Context outer = actual.currentContext();
    if (shared != null) {
      this.enclosing = shared;
      this.wheel = shared.wheel;
      this.context = outer.put(ContextKeys.DEADLINE, deadline);
    } else {
      this.enclosing = null;
      this.wheel = TimerWheel.of(deadline.scheduler());
      this.context = outer.isEmpty()   // one Context object instead of two
          ? Context.of(ContextKeys.DEADLINE, deadline, SHARED_TIMER, this)
          : outer.put(ContextKeys.DEADLINE, deadline).put(SHARED_TIMER, this);
    }
  }

  /** The subscriber whose timer deadlines on {@code scheduler} share in {@code context}, or {@code null}. */
  @Nullable
  static DeadlineSubscriber<?> sharedTimer(Context context, Scheduler scheduler) {
    Object shared = context.getOrDefault(SHARED_TIMER, null);
    return shared instanceof DeadlineSubscriber<?> timer && timer.deadline.scheduler() == scheduler ? timer : null;
  }

  Deadline deadline() {
    return deadline;
  }

  /**
   * The instant this deadline started, if the calling thread is subscribing to it now (inside its
   * {@code source.subscribe}); else {@link TimerWheel#NONE}. A deadline below it subscribed then starts at the same
   * instant: one clock read for a call's whole chain of deadlines, and in virtual time the very same instant.
   */
  long startIfSubscribingHere() {
    return subscribingHere() ? startNanos : TimerWheel.NONE;
  }

  @Override
  public Context currentContext() {
    return context;
  }

  /** Called by the arming gate (see {@link GatedTimer}): shares the enclosing deadline's timer or files its own. */
  @Override
  protected void arm() {
    if (!live()) {
      return;   // ended during its subscription: no timer
    }
    try {
      if (enclosing != null && enclosing.share(this)) {
        if (!live()) {
          enclosing.leave(this);   // ended while joining: releaseTimer() may have run before the join
        }
        return;
      }
      if (enclosing != null) {
        ownTimer = true;
      }
      fileOwn(wheel);
    } catch (RejectedExecutionException rejected) {
      endRefused(rejected, LIVE);
    }
  }

  /** Whether the call runs: the timer may fire (an item may be being delivered). */
  private boolean live() {
    int current = state;
    return current == LIVE || current == EMITTING;
  }

  /** Files this subscriber's timer for the earlier of its deadline and the nested one's, unless filed earlier. */
  private void fileOwn(TimerWheel w) {
    TimerWheel.Start start;
    Disposable stale = null;
    synchronized (w) {
      if (released || !live()) {   // read after the wheel is set: an end from now on unfiles the timer
        return;
      }
      armed = true;
      DeadlineSubscriber<?> n = nested;
      long want = n == null ? expiresAt : Math.min(expiresAt, n.expiresAt);
      TimerWheel.Slot filedIn = slot;
      if (filedIn != null && at <= want) {
        return;
      }
      if (filedIn != null) {
        stale = filedIn.unfileLocked(this);
      }
      start = w.slot(want).fileLocked(this, want);
    }
    startAfterLocks(stale, start);
  }

  /**
   * A nested deadline {@code d} asks to wait on this subscriber's timer. Returns {@code false} if it must file its
   * own: this deadline is over, or another nested deadline already shares the timer.
   */
  private boolean share(DeadlineSubscriber<?> d) {
    TimerWheel.Start start;
    Disposable stale = null;
    TimerWheel w = wheel;
    synchronized (w) {
      if (released || nested != null || !live()) {   // the state is read after the wheel is set, as above
        return false;
      }
      nested = d;
      long want = armed ? Math.min(expiresAt, d.expiresAt) : d.expiresAt;
      TimerWheel.Slot filedIn = slot;
      if (filedIn != null && at <= want) {
        return true;
      }
      if (filedIn != null) {
        stale = filedIn.unfileLocked(this);
      }
      start = w.slot(want).fileLocked(this, want);
    }
    startAfterLocks(stale, start);
    return true;
  }

  /** The nested deadline {@code d} is over; the timer stays filed (it fires early at worst, and is filed again). */
  private void leave(DeadlineSubscriber<?> d) {
    if (nested == d) {
      NESTED.compareAndSet(this, d, null);
    }
  }

  /**
   * This deadline is over: its timer is unfiled (a nested deadline, if any, is being cancelled with it). Its slot's
   * task stays for the timers filed next (see {@link TimerWheel}).
   */
  private void releaseOwn(TimerWheel w) {
    Disposable stale = null;
    synchronized (w) {
      released = true;
      armed = false;
      if (nested != null) {
        nested = null;   // written only when set: a volatile write costs a fence
      }
      TimerWheel.Slot filedIn = slot;
      if (filedIn != null) {
        stale = filedIn.cancelLocked(this, near);
      }
    }
    if (stale != null) {
      stale.dispose();
    }
  }

  @Override
  protected void releaseTimer() {
    if (enclosing == null) {
      releaseOwn(wheel);
      return;
    }
    enclosing.leave(this);
    if (ownTimer) {
      releaseOwn(wheel);
    }
  }

  private void startAfterLocks(@Nullable Disposable stale, TimerWheel.@Nullable Start start) {
    if (stale != null) {
      stale.dispose();
    }
    if (start != null) {
      start.run(deadline.scheduler());
    }
  }

  /**
   * The timer's instant has come: fires this deadline if it has passed, else the nested one if it has, and files the
   * timer again for whatever is still waited for.
   */
  @Override
  protected void expire(long now) {
    DeadlineSubscriber<?> due = null;
    TimerWheel.Start start = null;
    TimerWheel w = wheel;
    synchronized (w) {
      if (slot != null) {
        return;   // filed again since it was taken out, for an instant no later than any waited for
      }
      if (armed && expiresAt <= now) {
        due = this;
      } else {
        DeadlineSubscriber<?> n = nested;
        if (n != null && n.expiresAt <= now) {
          NESTED.compareAndSet(this, n, null);
          due = n;
          n = null;
        }
        long want = armed ? expiresAt : TimerWheel.NONE;
        if (n != null) {
          want = Math.min(want, n.expiresAt);
        }
        if (want != TimerWheel.NONE) {
          start = w.slot(want).fileLocked(this, want);
        }
      }
    }
    if (start != null) {
      try {
        start.run(deadline.scheduler());
      } catch (RejectedExecutionException rejected) {
        // The scheduler is being disposed: its timers die with it.
      }
    }
    if (due != null) {
      due.run();
    }
  }

  /** The timer fired. */
  @Override
  public void run() {
    for (;;) {
      int current = state;
      if (current == LIVE) {
        if (claim(LIVE, ENDED)) {
          endWith(deadline.exceeded());
          return;
        }
      } else if (current == EMITTING) {
        if (claim(EMITTING, EXPIRED_WHILE_EMITTING)) {
          releaseTimer();
          cancelUpstream();
          return;
        }
      } else {
        return;
      }
    }
  }

  @Override
  public void onNext(T t) {
    if (t == null) {
      throw new NullPointerException("onNext(null) in withDeadline(" + deadline.name()
          + "): Reactive Streams rule 2.13");
    }
    if (mono) {
      answer(t);   // a Mono's item meets the deadline
      return;
    }
    int current = state;
    if (current == EMITTING) {
      // Re-entrant: upstream emitted from inside a request made by the onNext below us on this thread (signals are
      // serial, so no other thread can be inside onNext now). Delivered in place, in order.
      actual.onNext(t);
      return;
    }
    if (current != LIVE || !claim(LIVE, EMITTING)) {
      Operators.onDiscard(t, context);   // the deadline passed (or the subscriber left) first
      return;
    }
    actual.onNext(t);
    if (!claim(EMITTING, LIVE)
        && claim(EXPIRED_WHILE_EMITTING, ENDED)) {
      // The timer fired while the item was delivered; it cancelled upstream and left the error to us.
      actual.onError(deadline.exceeded());
    }
  }

  @Override
  public void onError(Throwable t) {
    if (state == ANSWERED) {
      actual.onError(t);   // a Mono that fails after its item: passed on as it came
      return;
    }
    if (terminate()) {
      actual.onError(endedBy(t));
    } else {
      Operators.onErrorDropped(t, context);
    }
  }

  /**
   * The error the subscriber gets for upstream's {@code t}: the deadline's own timeout when {@code t} comes once the
   * deadline has passed (an inner wait, a limit or a retry bounded by the deadline gave up at its instant, before
   * this deadline's timer fired), with {@code t} suppressed in it; else {@code t}. A call that its deadline ends
   * always fails with a {@link TimeoutException}.
   */
  private Throwable endedBy(Throwable t) {
    if (t instanceof TimeoutException || expiresAt == Long.MAX_VALUE || deadline.remainingNanos() > 0) {
      return t;
    }
    TimeoutException exceeded = deadline.exceeded();
    exceeded.addSuppressed(t);
    return exceeded;
  }

  @Override
  public void onComplete() {
    if (state == ANSWERED || terminate()) {
      actual.onComplete();
    }
  }

  /**
   * Claims the terminal signal for upstream: from {@code LIVE}, or from {@code EMITTING} when upstream ends from
   * inside a request made by the item being delivered (re-entrant, on this thread). After the timer has fired, its
   * error wins.
   */
  private boolean terminate() {
    for (;;) {
      int current = state;
      if (current != LIVE && current != EMITTING) {
        return false;
      }
      if (claim(current, ENDED)) {
        releaseTimer();
        return true;
      }
    }
  }

  /** The timer fired or the call ended: nothing more is relayed but a Mono's completion after its item. */
  private boolean ended() {
    int current = state;
    return current == EXPIRED_WHILE_EMITTING || current == ENDED;
  }

  @Override
  @Nullable
  public Object scanUnsafe(Attr key) {
    return key == Attr.NAME ? "withDeadline(" + deadline.name() + ")"
        : Lift.scanRelay(key, s, actual, ended());
  }
}
