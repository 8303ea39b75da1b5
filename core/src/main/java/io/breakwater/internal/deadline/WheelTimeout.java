package io.breakwater.internal.deadline;

import io.breakwater.internal.Lift;
import io.breakwater.internal.Saturating;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoOperator;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * {@code Mono.timeout(Duration, Scheduler)} on a deadline's {@link TimerWheel}: a {@link TimeoutException} if the
 * source has neither answered nor ended within its bound from its {@code onSubscribe}, the source cancelled. Its
 * timer costs one clock read, then a few pointer writes under the wheel's lock to arm and to cancel, where Reactor's
 * is a task on the scheduler (a heap insert and removal under the executor's lock, and often a wake-up of its thread)
 * for every call. Under {@code VirtualTimeScheduler} it fires at the very nanosecond its bound ends.
 *
 * <p>As with deadlines and hedges, the task that fires the timer is its wheel slot's, shared by the calls filed in that
 * slot: a {@code Schedulers.onScheduleHook} decorates it with what the first of them captured (thread-locals restored
 * around the timeout error are that call's, not necessarily this one's). The Reactor Context is each call's own.
 *
 * @param <T> the value
 */
public final class WheelTimeout<T> extends MonoOperator<T, T> {

  private final long nanos;
  private final Scheduler clock;

  /**
   * {@code source} bounded by {@code nanos} on {@code clock}.
   *
   * @param nanos the bound: one longer than {@link Saturating#MAX_DELAY_NANOS} is that, a negative one zero
   */
  public WheelTimeout(Mono<? extends T> source, long nanos, Scheduler clock) {
    super(source);
    this.nanos = Saturating.delayNanos(Math.max(0L, nanos));
    this.clock = clock;
  }

  @Override
  public void subscribe(CoreSubscriber<? super T> actual) {
    Bound<T> bound = new Bound<>(actual, nanos, clock);
    Lift.subscribeUpstream(source, bound);
    bound.subscribed();
  }

  static final class Bound<T> extends TimerWheel.Timer implements CoreSubscriber<T>, Subscription, Scannable {

    private static final int RUNNING = 0;
    /** The value came in time: the timer is released and the rest passes through. */
    private static final int ANSWERED = 1;
    private static final int DONE = 2;

    private final CoreSubscriber<? super T> actual;
    private final long nanos;
    private final Scheduler clock;
    private final TimerWheel wheel;
    /** The thread that subscribes: an {@code onSubscribe} on it before {@link #subscribed} needs no atomic gate. */
    private final Thread subscribing = Thread.currentThread();
    /** {@link #subscribed} has been called. Written and read on the subscribing thread only. */
    private boolean returned;
    /** {@code onSubscribe} came on the subscribing thread, inside the subscription. Same confinement. */
    private boolean subscribedInline;

    // set in onSubscribe, which Reactive Streams (rule 1.9) signals before anything that reads it
    @SuppressWarnings("NullAway.Init")
    private Subscription s;
    /**
     * The clock when {@code onSubscribe} came: the bound runs from there, as Reactor's timeout's does. Read by
     * {@link #arm}, after the same thread's {@code onSubscribe} or the gate that orders them.
     */
    private long start;

    private volatile int state;
    @SuppressWarnings("rawtypes")
    private static final AtomicIntegerFieldUpdater<Bound> STATE =
        AtomicIntegerFieldUpdater.newUpdater(Bound.class, "state");

    // read and written only through GATE, which Error Prone's UnusedVariable does not follow
    @SuppressWarnings("UnusedVariable")
    private volatile int gate;
    @SuppressWarnings("rawtypes")
    private static final AtomicIntegerFieldUpdater<Bound> GATE =
        AtomicIntegerFieldUpdater.newUpdater(Bound.class, "gate");

    Bound(CoreSubscriber<? super T> actual, long nanos, Scheduler clock) {
      this.actual = actual;
      this.nanos = nanos;
      this.clock = clock;
      this.wheel = TimerWheel.of(clock);
    }

    /**
     * Called once the source's subscription has returned. The timer is armed by whichever of this and
     * {@link #onSubscribe} comes second: when {@code onSubscribe} came inside the subscription, on this thread (the
     * common case), the order is known and no atomic gate is passed.
     */
    void subscribed() {
      returned = true;
      if (subscribedInline) {
        arm();
      } else {
        passGate();
      }
    }

    private void passGate() {
      if (GATE.incrementAndGet(this) == 2) {
        arm();
      }
    }

    /**
     * Files the timer, unless the call ended meanwhile (a call that answers during its subscription arms nothing).
     * The filing and {@link #release} take the wheel's lock, and the end is claimed before the timer is released: so
     * either the release finds the timer filed, or the read after the filing sees the end.
     */
    private void arm() {
      if (state != RUNNING) {
        return;
      }
      try {
        wheel.file(this, Saturating.add(start, nanos), clock);
      } catch (RejectedExecutionException rejected) {
        if (STATE.compareAndSet(this, RUNNING, DONE)) {
          Lift.cancelUpstream(s, actual.currentContext());
          actual.onError(Operators.onRejectedExecution(rejected, actual.currentContext()));
        }
        return;
      }
      if (state != RUNNING) {
        release();
      }
    }

    private void release() {
      wheel.release(this, nanos <= TimerWheel.KEEP_HORIZON);
    }

    @Override
    protected void expire(long now) {
      if (STATE.compareAndSet(this, RUNNING, DONE)) {
        Lift.cancelUpstream(s, actual.currentContext());
        actual.onError(new TimeoutException("Did not observe any item or terminal signal within "
            + nanos / 1_000_000L + "ms"));
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
        start = clock.now(TimeUnit.NANOSECONDS);
        actual.onSubscribe(this);
        if (Thread.currentThread() == subscribing && !returned) {
          subscribedInline = true;   // the common case: subscribed() follows on this thread and arms
        } else {
          passGate();
        }
      }
    }

    @Override
    public void onNext(T t) {
      if (state != RUNNING || !STATE.compareAndSet(this, RUNNING, ANSWERED)) {
        Operators.onDiscard(t, actual.currentContext());   // after the timeout (or a cancel)
        return;
      }
      release();
      actual.onNext(t);
    }

    @Override
    public void onError(Throwable t) {
      if (state == ANSWERED) {
        actual.onError(t);   // a Mono that fails after its value: passed on as it came
      } else if (STATE.compareAndSet(this, RUNNING, DONE)) {
        release();
        actual.onError(t);
      } else {
        Operators.onErrorDropped(t, actual.currentContext());
      }
    }

    @Override
    public void onComplete() {
      if (state == ANSWERED) {
        actual.onComplete();
      } else if (STATE.compareAndSet(this, RUNNING, DONE)) {
        release();
        actual.onComplete();
      }
    }

    @Override
    public void request(long n) {
      s.request(n);
    }

    @Override
    public void cancel() {
      state = DONE;
      release();
      s.cancel();
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
        return state == DONE;
      }
      if (key == Attr.RUN_STYLE) {
        return Attr.RunStyle.SYNC;
      }
      return null;
    }
  }
}
