package io.breakwater.internal.stream;

import io.breakwater.stream.FirstItemTimeoutException;
import io.breakwater.stream.IdleTimeoutException;
import io.breakwater.internal.Lift;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.deadline.GatedTimer;
import io.breakwater.stream.StreamTimeouts;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * First-item and idle timeouts on a progress clock, with one lazily re-armed timer per subscription (Netty's
 * {@code IdleStateHandler} pattern), in one of two modes. The timer is a task on the scheduler, first armed by the gate
 * of {@link GatedTimer}, whose contract it keeps: a stream that ends during its subscription schedules none.
 *
 * <h2>Exact (the default)</h2>
 * Each progress item records the clock ({@code lastProgressAt}, a release store). The timer is armed for the instant
 * the stream would be late if nothing came; when it fires it reads the last progress and either times out (now is at
 * or past last progress + d) or re-arms for exactly the remainder. So a timeout fires at last progress + d, to the
 * nanosecond in virtual time, with one pending task per subscription.
 *
 * <p>Timing out must never overlap an {@code onNext} in flight, and takes no lock. {@code seq} is odd while an item
 * is being delivered. {@code onNext} makes it odd with a volatile store and then reads {@code state}; the timer moves
 * {@code state} to {@code TIMING_OUT} with a CAS and then reads {@code seq}. Volatile accesses are sequentially
 * consistent, so (Dekker) either the timer sees an even {@code seq}, and no {@code onNext} is or will be delivering (a
 * later one sees {@code TIMING_OUT} and discards its item), or it sees the item being delivered. Then it cancels
 * upstream and checks again every timeout/{@value StreamTimeouts#TICKS_PER_TIMEOUT} until {@code seq} is even: the
 * store that makes it even after the delivery is a release store, with no fence, so it may reach the timer a little
 * late, but a later acquire read sees it (an even value read with acquire also means the delivery has returned).
 * The emitting thread reads {@code state} after that store too, and usually signals the error as its item returns.
 * Whoever claims the error with a CAS to {@code ENDED} signals it, so it is signalled once. The argument rests on
 * the memory model alone, and the hot path has one fence, not two.
 *
 * <h2>Coarse ({@code StreamTimeouts.builder().coarse()})</h2>
 * {@code onNext} reads no clock and takes no fence: two opaque/release stores of {@code seq}, which are plain moves
 * on x86. The timer ticks every timeout/{@value StreamTimeouts#TICKS_PER_TIMEOUT}: if the progress count moved since
 * the last tick, "now" becomes the time of last progress (late by at most one tick, never early); otherwise, once
 * the timeout has passed since then, it times out, in two phases: phase 1 publishes {@code TIMING_OUT} and cancels
 * upstream; phase 2, one scheduler hop later, reads {@code seq} and signals the error, or hands it to the emitting
 * thread ({@code HANDOFF}) when an item is being delivered. Without a fence after the emitting thread's opaque store
 * of {@code seq}, this relies on that store becoming visible within the hop (store buffers drain in nanoseconds; a
 * hop takes microseconds) — a hardware fact the Java memory model does not promise. That is the price of the
 * cheapest hot path, and why coarse is an opt-in.
 */
final class StreamTimeoutSubscriber<T> extends GatedTimer<T>
    implements CoreSubscriber<T>, Subscription, Scannable, Runnable {

  // The states beyond GatedTimer's LIVE and ENDED (a stream has no ANSWERED):
  /** A timeout is decided; its error is signalled by whoever finds no item being delivered. */
  private static final int TIMING_OUT = 3;
  /** Coarse mode: the timer found an item being delivered and handed the error to the emitting thread. */
  private static final int HANDOFF = 4;

  private static final Disposable DISPOSED = () -> {};

  private static final VarHandle SEQ;
  private static final VarHandle PROGRESS;
  private static final VarHandle LAST_PROGRESS_AT;
  private static final VarHandle TIMER;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      SEQ = lookup.findVarHandle(StreamTimeoutSubscriber.class, "seq", long.class);
      PROGRESS = lookup.findVarHandle(StreamTimeoutSubscriber.class, "progress", long.class);
      LAST_PROGRESS_AT = lookup.findVarHandle(StreamTimeoutSubscriber.class, "lastProgressAtExact", long.class);
      TIMER = lookup.findVarHandle(StreamTimeoutSubscriber.class, "timer", Disposable.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @Nullable private final Predicate<? super T> isProgress;
  private final Scheduler scheduler;
  /** 0 when there is no first-item timeout. */
  private final long firstNanos;
  /** 0 when there is no idle timeout. */
  private final long idleNanos;
  private final boolean exact;
  private final StreamTimeouts config;

  /** Written only by onNext: twice the items entered, plus one while an item is being delivered. */
  private long seq;
  /** Written only by onNext when there is a progress test (or in exact mode): the progress items seen. */
  private long progress;
  /** Exact mode: written only by onNext (release), the clock at the last progress item. */
  // read and written only through the VarHandle LAST_PROGRESS_AT, which Error Prone's UnusedVariable does not follow
  @SuppressWarnings("UnusedVariable")
  private long lastProgressAtExact;
  private volatile @Nullable Disposable timer;

  // Timer side: touched only by the timer task, whose runs are ordered (each run schedules the next).
  private long lastSeenProgress;
  private long lastProgressAt;
  private boolean progressed;
  private @Nullable TimeoutException pendingError;

  StreamTimeoutSubscriber(CoreSubscriber<? super T> actual, @Nullable Predicate<? super T> isProgress,
      Scheduler scheduler, long firstNanos, long idleNanos, StreamTimeouts config) {
    super(actual);
    this.config = config;
    this.isProgress = isProgress;
    this.scheduler = scheduler;
    this.firstNanos = firstNanos;
    this.idleNanos = idleNanos;
    this.exact = !config.coarse();
  }

  @Override
  protected void onUpstream() {
    lastProgressAt = scheduler.now(TimeUnit.NANOSECONDS);
  }

  /** Called by the arming gate (see {@link GatedTimer}): the first timer, unless the stream has ended. */
  @Override
  protected void arm() {
    if (state == LIVE) {
      armIn(firstDelay());
    }
  }

  private long firstDelay() {
    if (exact) {
      // Before the first item the timer never sleeps longer than the idle timeout: the first item may come at any
      // moment, and its idle deadline is then no earlier than now + idle.
      return firstNanos == 0 ? idleNanos : idleNanos == 0 ? firstNanos : Math.min(firstNanos, idleNanos);
    }
    if (firstNanos == 0) {
      return Math.min(tickNanos(), idleNanos);
    }
    return idleNanos == 0 ? firstNanos : Math.min(tickNanos(), firstNanos);
  }

  /**
   * The interval between coarse ticks, and between an exact timer's checks for the end of a delivery it found in
   * progress (computed when used, which is rare, to keep the subscriber small).
   */
  private long tickNanos() {
    return Math.max(1L, (idleNanos != 0 ? idleNanos : firstNanos) / StreamTimeouts.TICKS_PER_TIMEOUT);
  }

  @Override
  public void onNext(T t) {
    if (t == null) {
      throw new NullPointerException("onNext(null) in a stream timeout: Reactive Streams rule 2.13");
    }
    if (exact) {
      onNextExact(t);
      return;
    }
    long sq = seq;
    SEQ.setOpaque(this, sq + 1);
    if (state != LIVE) {
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
    if (state != LIVE) {
      claimAndSignalTimeout();
    }
  }

  /** The exact mode's hot path: one volatile store (the fence) and one release store, one clock read per progress. */
  private void onNextExact(T t) {
    long sq = seq;
    SEQ.setVolatile(this, sq + 1);
    if (state != LIVE) {
      SEQ.setVolatile(this, sq + 2);
      Operators.onDiscard(t, actual.currentContext());
      claimAndSignalTimeout();
      return;
    }
    Predicate<? super T> test = isProgress;
    boolean counts = true;
    if (test != null) {
      try {
        counts = test.test(t);
      } catch (Throwable e) {
        SEQ.setVolatile(this, sq + 2);
        onError(Operators.onOperatorError(s, e, t, actual.currentContext()));
        return;
      }
    }
    if (counts) {
      LAST_PROGRESS_AT.setRelease(this, scheduler.now(TimeUnit.NANOSECONDS));
      PROGRESS.setRelease(this, progress + 1);   // after the time: whoever sees the count sees the time
    }
    actual.onNext(t);
    SEQ.setRelease(this, sq + 2);   // no fence: a timer that saw the delivery checks again until it sees this
    if (state != LIVE) {
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
      if (claim(current, ENDED)) {
        releaseTimer();
        if (exact) {
          cancelUpstream();   // idempotent: the timer may have cancelled already
        }
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
      if (current == ENDED) {
        return false;
      }
      if (current != LIVE) {
        claimAndSignalTimeout();
        return false;
      }
      if (claim(LIVE, ENDED)) {
        releaseTimer();
        return true;
      }
    }
  }

  /**
   * The timer: in exact mode a check of the deadline, or of the end of a delivery that a timeout found in progress;
   * in coarse mode a tick or phase 2 of a timeout.
   */
  @Override
  public void run() {
    int current = state;
    if (exact) {
      if (current == LIVE) {
        checkExact();
      } else if (current == TIMING_OUT) {
        signalOnceDelivered();
      }
      return;
    }
    if (current == TIMING_OUT) {
      signalTimeoutFromTimer();
      return;
    }
    if (current != LIVE) {
      return;
    }
    tick();
  }

  /** Exact mode: time out at last progress + d, or re-arm for exactly what remains. */
  private void checkExact() {
    long now = scheduler.now(TimeUnit.NANOSECONDS);
    boolean progressed = (long) PROGRESS.getAcquire(this) != 0;
    if (progressed && idleNanos == 0) {
      return;   // only a first-item timeout, and the first item came: nothing left to watch
    }
    boolean first = !progressed && firstNanos != 0;
    long since = progressed ? (long) LAST_PROGRESS_AT.getOpaque(this) : lastProgressAt;
    long limit = first ? firstNanos : idleNanos;
    long due = Saturating.add(since, limit);
    if (now - due < 0) {
      armIn(first && idleNanos != 0 ? Math.min(due - now, idleNanos) : due - now);
      return;
    }
    TimeoutException error = first
        ? new FirstItemTimeoutException(Duration.ofNanos(firstNanos), Duration.ofNanos(now - since))
        : new IdleTimeoutException(Duration.ofNanos(idleNanos), Duration.ofNanos(now - since));
    pendingError = error;
    if (!claim(LIVE, TIMING_OUT)) {
      return;
    }
    (first ? config.firstItemTimeouts() : config.idleTimeouts()).increment();
    if (((long) SEQ.getVolatile(this) & 1L) == 0L) {
      // No item is being delivered, and any later one sees TIMING_OUT: the error is ours to signal, if still unclaimed.
      if (claim(TIMING_OUT, ENDED)) {
        endWith(error);
      }
    } else {
      armIn(tickNanos());   // the check below, unless the emitting thread signals first as its item returns
      cancelUpstream();
    }
  }

  /** Exact mode: a timeout found an item being delivered; signal its error once the delivery has returned. */
  private void signalOnceDelivered() {
    if (((long) SEQ.getAcquire(this) & 1L) == 0L) {
      claimAndSignalTimeout();
    } else {
      armIn(tickNanos());
    }
  }

  /** Coarse mode: a tick. */
  private void tick() {
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
    armIn(idleNanos == 0 ? untilLimit : Math.min(tickNanos(), untilLimit));
  }

  /** Phase 1: decide, publish the decision, cancel upstream; phase 2 runs one hop later. */
  private void beginTimeout(TimeoutException error) {
    pendingError = error;
    if (!claim(LIVE, TIMING_OUT)) {
      return;
    }
    (error instanceof FirstItemTimeoutException ? config.firstItemTimeouts() : config.idleTimeouts()).increment();
    armIn(0L); // phase 2 first: however upstream reacts to the cancellation, the error will be signalled
    cancelUpstream();
  }

  /** Phase 2: signal the error here if no item is being delivered, else hand it to the emitting thread. */
  private void signalTimeoutFromTimer() {
    long sq = (long) SEQ.getAcquire(this);
    if ((sq & 1L) == 0L) {
      if (claim(TIMING_OUT, ENDED)) {
        releaseTimer();
        actual.onError(pendingError);
      }
    } else if (claim(TIMING_OUT, HANDOFF)) {
      releaseTimer();
      if ((long) SEQ.getAcquire(this) != sq) {
        claimAndSignalTimeout(); // the item was delivered meanwhile and may have missed the hand-off
      }
    }
  }

  private void armIn(long delayNanos) {
    Disposable task;
    try {
      task = delayNanos <= 0L ? scheduler.schedule(this)
          : scheduler.schedule(this, Saturating.delayNanos(delayNanos), TimeUnit.NANOSECONDS);
    } catch (Throwable rejected) {
      int current = state;
      if (current != ENDED) {
        endRefused(rejected, current);
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

  @Override
  protected void releaseTimer() {
    Disposable d = (Disposable) TIMER.getAndSet(this, DISPOSED);
    if (d != null && d != DISPOSED) {
      d.dispose();
    }
  }

  @Override
  @Nullable
  public Object scanUnsafe(Attr key) {
    if (key == Attr.RUN_ON) {
      return scheduler;
    }
    return key == Attr.NAME ? "streamTimeouts" : Lift.scanRelay(key, s, actual, state == ENDED);
  }
}
