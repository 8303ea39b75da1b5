package io.breakwater.internal.deadline;

import io.breakwater.internal.Lift;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * The timer of one subscription of a timed operator: a deadline ({@code DeadlineSubscriber}), a store call's bound
 * ({@link WheelTimeout}), a stream's timeouts ({@code StreamTimeoutSubscriber}) and a hedge ({@code HedgeSubscriber}).
 * It holds what they share: the subscriber it relays to, the subscription of its source, the arming gate, the state of
 * the call ({@link #LIVE}, {@link #ANSWERED}, {@link #ENDED}, and states of a subscriber's own from 3 up) and the tail
 * that ends a call; what each keeps of the contract below with states of its own is said where it does.
 *
 * <ul>
 *   <li><b>Who arms.</b> {@link #arm()} is called once per subscription, by whichever comes second of
 *   {@link #downstreamSubscribed()} ({@code onSubscribe} has been passed down) and {@link #sourceReturned()} (the
 *   subscription of the source has returned). A call that ends during its subscription, the common case for cached and
 *   in-memory calls, so arms no timer, even when an operator below signals {@code onSubscribe} before it subscribes to
 *   its own source (as retry operators do). When {@code onSubscribe} comes on the subscribing thread inside the
 *   subscription, the order is known and the gate takes no atomic step; otherwise each side takes one, and the second
 *   arms. {@code arm()} returns at once if the call has ended, and once its timer is filed it finds out whether the call
 *   ended meanwhile (a read of the state after the filing, or a read under the lock the release takes), so that an end
 *   racing the arming never leaves the timer filed.
 *   <li><b>Who fires.</b> The timer alone, and only by claiming the end of the call ({@link #claim}) from a running
 *   state: a call that ended first (its answer, its end, a cancellation) leaves it nothing to do. A {@code Mono}'s value
 *   claims the end before it is delivered ({@link #answer}), so the timer never fires after it. A timer that finds an
 *   item being delivered does not signal over it: it records the timeout and cancels upstream, and the emitting thread
 *   signals the error when its {@code onNext} returns.
 *   <li><b>Re-entrant signals.</b> A signal that upstream sends from inside a request made by the {@code onNext}
 *   below, on the same thread, is delivered in place, in order, and may claim the end of the call as any signal may.
 *   <li><b>The tail.</b> Whoever claims the end releases the timer ({@link #releaseTimer}: releasing one that fired,
 *   or was never filed, does nothing) and signals downstream once; when the timer ended the call it also cancels
 *   upstream, whose error goes out whatever {@code cancel} throws ({@link #endWith}). A cancellation from downstream
 *   ends the call, releases the timer and cancels upstream ({@link #cancel}): it is an outcome, never a timeout. A
 *   scheduler that refuses the timer ends the call with {@code Operators.onRejectedExecution}'s error, claimed before
 *   upstream is cancelled ({@link #endRefused}).
 * </ul>
 *
 * <p>Both sides of the gate are called at most once per subscription, {@link #sourceReturned()} on the subscribing
 * thread (the one that made this object). A hedge relays no single source (its attempts subscribe to theirs): it calls
 * both sides itself around the subscription of its primary attempt, keeps the state of its race in a field of its own,
 * and overrides {@link #request}, {@link #cancel} and {@link #currentContext}.
 *
 * @param <T> the items relayed
 */
public abstract class GatedTimer<T> implements Subscription {

  /** {@code onSubscribe} has been passed down. */
  private static final int DOWNSTREAM = 1;
  /** The subscription of the source has returned. */
  private static final int RETURNED = 2;
  /** {@code onSubscribe} came on the subscribing thread inside the subscription: no atomic step is needed. */
  private static final int INLINE = 4;

  /** The call runs: the timer may fire. */
  protected static final int LIVE = 0;
  /** A {@code Mono}'s value came in time: the timer is released and the rest of upstream's signals pass through. */
  protected static final int ANSWERED = 1;
  /** The call has ended: by upstream, by the timer (or its refusal), or by a cancellation. */
  protected static final int ENDED = 2;

  private static final VarHandle GATE;
  private static final VarHandle STATE;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      GATE = lookup.findVarHandle(GatedTimer.class, "gate", int.class);
      STATE = lookup.findVarHandle(GatedTimer.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  protected final CoreSubscriber<? super T> actual;
  /** The subscription of the source, set in {@link #onSubscribe}; Reactive Streams (rule 1.9) orders it first. */
  @SuppressWarnings("NullAway.Init")
  protected Subscription s;
  /** The thread that subscribes. */
  private final Thread subscribing = Thread.currentThread();
  /**
   * The gate's flags. Plain reads and writes on the subscribing thread while {@link #INLINE} is set or about to be
   * (only that thread sets it, and then no other thread writes here); atomic ones otherwise.
   */
  // read and written only through GATE, which Error Prone's UnusedVariable does not follow
  @SuppressWarnings("UnusedVariable")
  private int gate;
  /**
   * {@link #LIVE}, {@link #ANSWERED}, {@link #ENDED}, or a state of the subscriber's own (3 and up). A hedge, which
   * calls none of the methods that read these three, keeps its race here in its own encoding.
   */
  protected volatile int state;

  protected GatedTimer(CoreSubscriber<? super T> actual) {
    this.actual = actual;
  }

  /** Files the timer unless the call has ended; called once, by the gate. */
  protected abstract void arm();

  /**
   * Unfiles or disposes the timer, from any thread, once the call has ended (the state is changed first); does
   * nothing if it fired or was never filed.
   */
  protected abstract void releaseTimer();

  /** Moves the state from {@code from} to {@code to} in one atomic step; false if it was not {@code from}. */
  protected final boolean claim(int from, int to) {
    return STATE.compareAndSet(this, from, to);
  }

  /**
   * A {@code Mono}'s value: it meets the timer, so it claims the end of the call ({@link #ANSWERED}) with one atomic
   * step and releases the timer before it is delivered; the timer can no longer signal anything from then on. A value
   * that comes once the call has ended (the timer fired, or the subscriber left) is discarded.
   */
  protected final void answer(T t) {
    if (state != LIVE || !claim(LIVE, ANSWERED)) {
      Operators.onDiscard(t, currentContext());
      return;
    }
    releaseTimer();
    actual.onNext(t);
  }

  /**
   * The tail of a call that the timer ended, once the caller has claimed the end: releases the timer, cancels
   * upstream (the error goes out whatever {@code cancel} throws) and signals {@code error}.
   */
  protected final void endWith(Throwable error) {
    releaseTimer();
    cancelUpstream();
    actual.onError(error);
  }

  /**
   * The scheduler refused the timer: ends the call with Reactor's rejection error, if its state is still
   * {@code from}. The end is claimed before upstream is cancelled: cancelling first could end the call before the
   * error is claimed, with no signal at all.
   */
  protected final void endRefused(Throwable rejected, int from) {
    if (claim(from, ENDED)) {
      endWith(Operators.onRejectedExecution(rejected, currentContext()));
    }
  }

  /**
   * {@code onSubscribe} of a subscriber that relays its source: records the subscription, lets {@link #onUpstream}
   * read what it needs, passes this subscriber down, then takes its side of the gate. A second subscription is
   * cancelled and reported, as Reactor's operators do. (A hedge, not a subscriber itself, never receives it.)
   */
  public final void onSubscribe(Subscription s) {
    if (Operators.validate(this.s, s)) {
      this.s = s;
      onUpstream();
      actual.onSubscribe(this);
      downstreamSubscribed();
    }
  }

  /** Called in {@link #onSubscribe} before this subscriber is passed down: a timer that starts then reads the clock. */
  protected void onUpstream() {
  }

  /** Called once {@code onSubscribe} has been passed down (from {@code onSubscribe}, on any thread). */
  protected final void downstreamSubscribed() {
    if (subscribingHere()) {
      GATE.set(this, DOWNSTREAM | INLINE);   // the common case: sourceReturned() follows on this thread and arms
    } else if (((int) GATE.getAndBitwiseOr(this, DOWNSTREAM) & RETURNED) != 0) {
      arm();
    }
  }

  /** Called once the subscription of the source has returned, on the subscribing thread. */
  public final void sourceReturned() {
    int g = (int) GATE.get(this);
    if ((g & INLINE) != 0) {
      GATE.set(this, g | RETURNED);
      arm();
    } else if (((int) GATE.getAndBitwiseOr(this, RETURNED) & DOWNSTREAM) != 0) {
      arm();
    }
  }

  /** Whether the calling thread is subscribing this call now, inside the subscription of its source. */
  protected final boolean subscribingHere() {
    return Thread.currentThread() == subscribing && ((int) GATE.get(this) & RETURNED) == 0;
  }

  @Override
  public void request(long n) {
    s.request(n);
  }

  /** Downstream leaves: an outcome, not a timeout. The call ends, its timer is released and upstream cancelled. */
  @Override
  public void cancel() {
    state = ENDED;
    releaseTimer();
    s.cancel();
  }

  /** The Context of the subscriber this one relays to. */
  public Context currentContext() {
    return actual.currentContext();
  }

  /** Cancels upstream because the timer ended the call, whose error is signalled whatever {@code cancel} throws. */
  protected final void cancelUpstream() {
    Lift.cancelUpstream(s, currentContext());
  }
}
