package io.breakwater.internal.stream;

import io.breakwater.stream.FirstItemTimeoutException;
import io.breakwater.stream.IdleTimeoutException;
import io.breakwater.stream.StreamTimeouts;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.annotation.Nullable;
import reactor.util.context.Context;

/**
 * First-item and idle timeouts on a progress clock, with one lazily re-armed timer per subscription (Netty's
 * {@code IdleStateHandler} pattern).
 *
 * <h2>Hot path</h2>
 * {@code onNext} reads no clock and touches no timer: it marks itself as emitting in {@code seq} (odd while inside
 * {@code actual.onNext}), counts progress, delivers and marks itself done; two opaque/release stores and two volatile
 * loads, which are plain moves on x86. The timer ticks every timeout/{@value StreamTimeouts#TICKS_PER_TIMEOUT}: if
 * the progress count moved since the last tick, progress happened after that tick, so it records "now" as the time
 * of last progress (late by at most one tick, never early); otherwise, once the timeout has passed since then, it
 * times out.
 *
 * <h2>Timing out without a per-item lock</h2>
 * The timer must not signal {@code onError} while {@code onNext} runs, and the hot path takes no lock. So timing out
 * has two phases: phase 1 publishes {@code TIMING_OUT} (a full fence) and cancels upstream; phase 2, one scheduler
 * hop later, reads {@code seq}. Even: no item is being delivered, and any later {@code onNext} sees
 * {@code TIMING_OUT} and discards its item, so phase 2 signals the error. Odd: an item is being delivered; phase 2
 * hands the error over ({@code HANDOFF}) and the emitting thread signals it when {@code actual.onNext} returns. Both
 * sides claim the error with a CAS to {@code TERMINATED}, so it is signalled once. This relies on a store made
 * before the hop being visible after it (store buffers drain in nanoseconds; a hop takes microseconds).
 */
final class StreamTimeoutSubscriber<T> implements CoreSubscriber<T>, Subscription, Scannable, Runnable {

  private static final int RUNNING = 0;
  private static final int TIMING_OUT = 1;
  private static final int HANDOFF = 2;
  private static final int TERMINATED = 3;

  private static final Disposable DISPOSED = () -> {};

  private static final VarHandle SEQ;
  private static final VarHandle PROGRESS;
  private static final VarHandle STATE;
  private static final VarHandle TIMER;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      SEQ = lookup.findVarHandle(StreamTimeoutSubscriber.class, "seq", long.class);
      PROGRESS = lookup.findVarHandle(StreamTimeoutSubscriber.class, "progress", long.class);
      STATE = lookup.findVarHandle(StreamTimeoutSubscriber.class, "state", int.class);
      TIMER = lookup.findVarHandle(StreamTimeoutSubscriber.class, "timer", Disposable.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final CoreSubscriber<? super T> actual;
  @Nullable private final Predicate<? super T> isProgress;
  private final Scheduler scheduler;
  /** 0 when there is no first-item timeout. */
  private final long firstNanos;
  /** 0 when there is no idle timeout. */
  private final long idleNanos;
  private final long tickNanos;
  private final StreamTimeouts config;

  private Subscription s;

  /** Written only by onNext: twice the items entered, plus one while an item is being delivered. */
  private long seq;
  /** Written only by onNext when there is a progress test: the progress items seen. */
  private long progress;
  private volatile int state;
  private volatile Disposable timer;

  // Timer side: touched only by the timer task, whose runs are ordered (each run schedules the next).
  private long lastSeenProgress;
  private long lastProgressAt;
  private boolean progressed;
  private TimeoutException pendingError;

  StreamTimeoutSubscriber(CoreSubscriber<? super T> actual, @Nullable Predicate<? super T> isProgress,
      Scheduler scheduler, long firstNanos, long idleNanos, StreamTimeouts config) {
    this.config = config;
    this.actual = actual;
    this.isProgress = isProgress;
    this.scheduler = scheduler;
    this.firstNanos = firstNanos;
    this.idleNanos = idleNanos;
    this.tickNanos = Math.max(1L, idleNanos / StreamTimeouts.TICKS_PER_TIMEOUT);
  }

  @Override
  public Context currentContext() {
    return actual.currentContext();
  }

  @Override
  public void onSubscribe(Subscription s) {
    if (Operators.validate(this.s, s)) {
      this.s = s;
      lastProgressAt = scheduler.now(TimeUnit.NANOSECONDS);
      actual.onSubscribe(this);
      if (state == RUNNING) {
        arm(firstDelay());
      }
    }
  }

  private long firstDelay() {
    if (firstNanos == 0) {
      return Math.min(tickNanos, idleNanos);
    }
    return idleNanos == 0 ? firstNanos : Math.min(tickNanos, firstNanos);
  }

  @Override
  public void onNext(T t) {
    if (t == null) {
      throw new NullPointerException("onNext(null) in a stream timeout: Reactive Streams rule 2.13");
    }
    long sq = seq;
    SEQ.setOpaque(this, sq + 1);
    if (state != RUNNING) {
      SEQ.setRelease(this, sq + 2);
      Operators.onDiscard(t, actual.currentContext());
      claimAndSignalTimeout();
      return;
    }
    Predicate<? super T> test = isProgress;
    if (test != null) {
      boolean counts;
      try {
        counts = test.test(t);
      } catch (Throwable e) {
        SEQ.setRelease(this, sq + 2);
        onError(Operators.onOperatorError(s, e, t, actual.currentContext()));
        return;
      }
      if (counts) {
        PROGRESS.setOpaque(this, progress + 1);
      }
    }
    actual.onNext(t);
    SEQ.setRelease(this, sq + 2);
    if (state != RUNNING) {
      claimAndSignalTimeout();
    }
  }

  /** The emitting thread found a timeout decided: signal it unless the timer thread already did. */
  private void claimAndSignalTimeout() {
    for (;;) {
      int current = state;
      if (current != TIMING_OUT && current != HANDOFF) {
        return;
      }
      if (STATE.compareAndSet(this, current, TERMINATED)) {
        disposeTimer();
        actual.onError(pendingError);
        return;
      }
    }
  }

  @Override
  public void onError(Throwable t) {
    if (terminate()) {
      actual.onError(t);
    } else {
      Operators.onErrorDropped(t, actual.currentContext());
    }
  }

  @Override
  public void onComplete() {
    if (terminate()) {
      actual.onComplete();
    }
  }

  /**
   * Upstream ended. If a timeout was already decided, upstream was cancelled by it and its end (often caused by that
   * cancellation, e.g. a closed connection) gives way to the timeout error, signalled here; returns false then.
   */
  private boolean terminate() {
    for (;;) {
      int current = state;
      if (current == TERMINATED) {
        return false;
      }
      if (current != RUNNING) {
        claimAndSignalTimeout();
        return false;
      }
      if (STATE.compareAndSet(this, RUNNING, TERMINATED)) {
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

  /** The timer: a tick (state RUNNING) or phase 2 of a timeout (state TIMING_OUT). */
  @Override
  public void run() {
    int current = state;
    if (current == TIMING_OUT) {
      signalTimeoutFromTimer();
      return;
    }
    if (current != RUNNING) {
      return;
    }
    long now = scheduler.now(TimeUnit.NANOSECONDS);
    long seen = isProgress == null ? (long) SEQ.getOpaque(this) : (long) PROGRESS.getOpaque(this);
    if (seen != lastSeenProgress) {
      lastSeenProgress = seen;
      lastProgressAt = now;
      if (!progressed) {
        progressed = true;
        if (idleNanos == 0) {
          return; // only a first-item timeout, and the first item came: nothing left to watch
        }
      }
    } else {
      boolean first = !progressed && firstNanos != 0;
      long limit = first ? firstNanos : idleNanos;
      long since = now - lastProgressAt;
      if (since >= limit) {
        beginTimeout(first
            ? new FirstItemTimeoutException(Duration.ofNanos(firstNanos), Duration.ofNanos(since))
            : new IdleTimeoutException(Duration.ofNanos(idleNanos), Duration.ofNanos(since)));
        return;
      }
    }
    boolean first = !progressed && firstNanos != 0;
    long untilLimit = lastProgressAt + (first ? firstNanos : idleNanos) - now;
    arm(idleNanos == 0 ? untilLimit : Math.min(tickNanos, untilLimit));
  }

  /** Phase 1: decide, publish the decision, cancel upstream; phase 2 runs one hop later. */
  private void beginTimeout(TimeoutException error) {
    pendingError = error;
    if (!STATE.compareAndSet(this, RUNNING, TIMING_OUT)) {
      return;
    }
    (error instanceof FirstItemTimeoutException ? config.firstItemTimeouts() : config.idleTimeouts()).increment();
    arm(0L); // phase 2 first: however upstream reacts to the cancellation, the error will be signalled
    try {
      s.cancel();
    } catch (Throwable e) {
      Operators.onErrorDropped(e, actual.currentContext());
    }
  }

  /** Phase 2: signal the error here if no item is being delivered, else hand it to the emitting thread. */
  private void signalTimeoutFromTimer() {
    long sq = (long) SEQ.getAcquire(this);
    if ((sq & 1L) == 0L) {
      if (STATE.compareAndSet(this, TIMING_OUT, TERMINATED)) {
        disposeTimer();
        actual.onError(pendingError);
      }
    } else if (STATE.compareAndSet(this, TIMING_OUT, HANDOFF)) {
      disposeTimer();
      if ((long) SEQ.getAcquire(this) != sq) {
        claimAndSignalTimeout(); // the item was delivered meanwhile and may have missed the hand-off
      }
    }
  }

  private void arm(long delayNanos) {
    Disposable task;
    try {
      task = delayNanos <= 0L ? scheduler.schedule(this) : scheduler.schedule(this, delayNanos, TimeUnit.NANOSECONDS);
    } catch (Throwable rejected) {
      RuntimeException e = Operators.onRejectedExecution(rejected, this, null, null, actual.currentContext());
      int current = state;
      if (current != TERMINATED && STATE.compareAndSet(this, current, TERMINATED)) {
        s.cancel();
        actual.onError(e);
      }
      return;
    }
    for (;;) {
      Disposable current = timer;
      if (current == DISPOSED) {
        task.dispose();
        return;
      }
      if (TIMER.compareAndSet(this, current, task)) {
        return;
      }
    }
  }

  private void disposeTimer() {
    Disposable d = (Disposable) TIMER.getAndSet(this, DISPOSED);
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
      return state == TERMINATED;
    }
    if (key == Attr.RUN_ON) {
      return scheduler;
    }
    if (key == Attr.RUN_STYLE) {
      return Attr.RunStyle.SYNC;
    }
    if (key == Attr.NAME) {
      return "streamTimeouts";
    }
    return null;
  }
}
