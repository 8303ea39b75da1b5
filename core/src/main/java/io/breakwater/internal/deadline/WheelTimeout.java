package io.breakwater.internal.deadline;

import io.breakwater.internal.Lift;
import io.breakwater.internal.Saturating;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoOperator;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;

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
    bound.sourceReturned();
  }

  static final class Bound<T> extends TimerWheel.Timer<T> implements CoreSubscriber<T>, Subscription, Scannable {

    private final long nanos;
    private final Scheduler clock;
    private final TimerWheel wheel;
    /**
     * The clock when {@code onSubscribe} came: the bound runs from there, as Reactor's timeout's does. Read by
     * {@link #arm}, after the same thread's {@code onSubscribe} or the gate that orders them.
     */
    private long start;

    Bound(CoreSubscriber<? super T> actual, long nanos, Scheduler clock) {
      super(actual);
      this.nanos = nanos;
      this.clock = clock;
      this.wheel = TimerWheel.of(clock);
    }

    /**
     * Files the timer, unless the call ended meanwhile (a call that answers during its subscription arms nothing).
     * The filing and {@link #releaseTimer} take the wheel's lock, and the end is claimed before the timer is released:
     * so either the release finds the timer filed, or the read after the filing sees the end. Called by the arming
     * gate (see {@link GatedTimer}).
     */
    @Override
    protected void arm() {
      if (state != LIVE) {
        return;
      }
      try {
        wheel.file(this, Saturating.add(start, nanos), clock);
      } catch (RejectedExecutionException rejected) {
        endRefused(rejected, LIVE);
        return;
      }
      if (state != LIVE) {
        releaseTimer();
      }
    }

    @Override
    protected void releaseTimer() {
      wheel.release(this, nanos <= TimerWheel.KEEP_HORIZON);
    }

    @Override
    protected void expire(long now) {
      if (claim(LIVE, ENDED)) {
        endWith(new TimeoutException("Did not observe any item or terminal signal within "
            + nanos / 1_000_000L + "ms"));
      }
    }

    @Override
    protected void onUpstream() {
      start = clock.now(TimeUnit.NANOSECONDS);
    }

    @Override
    public void onNext(T t) {
      answer(t);
    }

    @Override
    public void onError(Throwable t) {
      if (state == ANSWERED) {
        actual.onError(t);   // a Mono that fails after its value: passed on as it came
      } else if (claim(LIVE, ENDED)) {
        releaseTimer();
        actual.onError(t);
      } else {
        Operators.onErrorDropped(t, actual.currentContext());
      }
    }

    @Override
    public void onComplete() {
      if (state == ANSWERED) {
        actual.onComplete();
      } else if (claim(LIVE, ENDED)) {
        releaseTimer();
        actual.onComplete();
      }
    }

    @Override
    @Nullable
    public Object scanUnsafe(Attr key) {
      return Lift.scanRelay(key, s, actual, state == ENDED);
    }
  }
}
