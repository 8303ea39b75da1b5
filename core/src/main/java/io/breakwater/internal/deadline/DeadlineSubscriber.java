package io.breakwater.internal.deadline;

import io.breakwater.deadline.Deadline;
import io.breakwater.internal.ContextKeys;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.util.annotation.Nullable;
import reactor.util.context.Context;

/**
 * Relays signals until the deadline passes, then cancels upstream and signals
 * {@link io.breakwater.deadline.DeadlineExceededException}.
 *
 * <p>One timer per subscription, armed only once both the subscription of the source has returned and
 * {@code onSubscribe} has been passed down: a chain that completes synchronously (the common case for cached and
 * in-memory calls) never arms one. The timer and {@code onNext} are
 * serialised by a small state machine, so the error is never signalled while an item is being delivered.
 */
final class DeadlineSubscriber<T> implements CoreSubscriber<T>, Subscription, Scannable, Runnable {

  private static final int IDLE = 0;
  private static final int EMITTING = 1;
  /** The timer fired during {@code onNext}; the emitting thread signals the error when it returns. */
  private static final int EXPIRED_WHILE_EMITTING = 2;
  private static final int TERMINATED = 3;

  private static final Disposable DISPOSED = () -> {};

  private final CoreSubscriber<? super T> actual;
  private final Deadline deadline;
  private final Context context;

  private Subscription s;

  private volatile int state;
  private static final AtomicIntegerFieldUpdater<DeadlineSubscriber> STATE =
      AtomicIntegerFieldUpdater.newUpdater(DeadlineSubscriber.class, "state");

  private volatile int gate;
  private static final AtomicIntegerFieldUpdater<DeadlineSubscriber> GATE =
      AtomicIntegerFieldUpdater.newUpdater(DeadlineSubscriber.class, "gate");

  private volatile Disposable timer;
  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<DeadlineSubscriber, Disposable> TIMER =
      AtomicReferenceFieldUpdater.newUpdater(DeadlineSubscriber.class, Disposable.class, "timer");

  DeadlineSubscriber(CoreSubscriber<? super T> actual, Deadline deadline) {
    this.actual = actual;
    this.deadline = deadline;
    this.context = actual.currentContext().put(ContextKeys.DEADLINE, deadline);
  }

  @Override
  public Context currentContext() {
    return context;
  }

  @Override
  public void onSubscribe(Subscription s) {
    if (Operators.validate(this.s, s)) {
      this.s = s;
      actual.onSubscribe(this);
      passGate();
    }
  }

  /**
   * Called once {@code source.subscribe(this)} has returned. The timer is armed by whichever of this and
   * {@link #onSubscribe} comes second, and only if the source has not terminated by then: a chain that completes
   * during its subscription arms no timer, even when an operator below signals {@code onSubscribe} before it
   * subscribes to its own source (as retry operators do).
   */
  void subscribed() {
    passGate();
  }

  private void passGate() {
    if (GATE.incrementAndGet(this) == 2 && state != TERMINATED) {
      arm();
    }
  }

  private void arm() {
    long delay = deadline.remainingNanos();
    Disposable task;
    try {
      task = deadline.scheduler().schedule(this, Math.max(0L, delay), TimeUnit.NANOSECONDS);
    } catch (Throwable rejected) {
      RuntimeException e = Operators.onRejectedExecution(rejected, this, null, null, context);
      if (STATE.compareAndSet(this, IDLE, TERMINATED)) {
        s.cancel();
        actual.onError(e);
      }
      return;
    }
    if (!TIMER.compareAndSet(this, null, task)) {
      task.dispose();
    }
  }

  /** The timer fired. */
  @Override
  public void run() {
    for (;;) {
      int current = state;
      if (current == IDLE) {
        if (STATE.compareAndSet(this, IDLE, TERMINATED)) {
          s.cancel();
          actual.onError(deadline.exceeded());
          return;
        }
      } else if (current == EMITTING) {
        if (STATE.compareAndSet(this, EMITTING, EXPIRED_WHILE_EMITTING)) {
          s.cancel();
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
    int current = state;
    if (current == EMITTING) {
      // Re-entrant: upstream emitted from inside a request made by the onNext below us on this thread (signals are
      // serial, so no other thread can be inside onNext now). Delivered in place, in order.
      actual.onNext(t);
      return;
    }
    if (current != IDLE || !STATE.compareAndSet(this, IDLE, EMITTING)) {
      Operators.onDiscard(t, context);   // the deadline passed (or the subscriber left) first
      return;
    }
    actual.onNext(t);
    if (!STATE.compareAndSet(this, EMITTING, IDLE)
        && STATE.compareAndSet(this, EXPIRED_WHILE_EMITTING, TERMINATED)) {
      // The timer fired while the item was delivered; it cancelled upstream and left the error to us.
      actual.onError(deadline.exceeded());
    }
  }

  @Override
  public void onError(Throwable t) {
    if (terminate()) {
      actual.onError(t);
    } else {
      Operators.onErrorDropped(t, context);
    }
  }

  @Override
  public void onComplete() {
    if (terminate()) {
      actual.onComplete();
    }
  }

  /**
   * Claims the terminal signal for upstream: from {@code IDLE}, or from {@code EMITTING} when upstream ends from
   * inside a request made by the item being delivered (re-entrant, on this thread). After the timer has fired, its
   * error wins.
   */
  private boolean terminate() {
    for (;;) {
      int current = state;
      if (current != IDLE && current != EMITTING) {
        return false;
      }
      if (STATE.compareAndSet(this, current, TERMINATED)) {
        disposeTimer();
        return true;
      }
    }
  }

  @Override
  public void request(long n) {
    s.request(n);
  }

  @Override
  public void cancel() {
    state = TERMINATED;
    disposeTimer();
    s.cancel();
  }

  private void disposeTimer() {
    Disposable d = TIMER.getAndSet(this, DISPOSED);
    if (d != null && d != DISPOSED) {
      d.dispose();
    }
  }

  @Override
  @Nullable
  public Object scanUnsafe(Attr key) {
    if (key == Attr.PARENT) {
      return s;
    }
    if (key == Attr.ACTUAL) {
      return actual;
    }
    if (key == Attr.TERMINATED || key == Attr.CANCELLED) {
      return state >= EXPIRED_WHILE_EMITTING;
    }
    if (key == Attr.RUN_STYLE) {
      return Attr.RunStyle.SYNC;
    }
    if (key == Attr.NAME) {
      return "withDeadline(" + deadline.name() + ")";
    }
    return null;
  }
}
