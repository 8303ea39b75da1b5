package io.breakwater.internal.limit;

import io.breakwater.internal.Lift;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * The part every subscriber of a call that holds a limit's permits shares: it relays signals and requests, and
 * {@link #settle()} is true exactly once, for whichever of the end, the error and the cancellation comes first.
 */
abstract class PermitRelay<T> implements CoreSubscriber<T>, Subscription, Scannable {

  final CoreSubscriber<? super T> actual;
  // set in onSubscribe, which Reactive Streams (rule 1.9) signals before anything that reads it
  @SuppressWarnings("NullAway.Init")
  Subscription s;

  private volatile int done;
  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<PermitRelay> DONE =
      AtomicIntegerFieldUpdater.newUpdater(PermitRelay.class, "done");

  PermitRelay(CoreSubscriber<? super T> actual) {
    this.actual = actual;
  }

  /** The operator and its limit, for errors and scans: {@code limitedBy(search)}. */
  abstract String operatorName();

  /** Whether the caller is the first to end the call, and so settles its permits. */
  final boolean settle() {
    return DONE.compareAndSet(this, 0, 1);
  }

  /**
   * {@link #settle()} for a call whose settlement only its own signals (the serialized {@code onNext},
   * {@code onError} and {@code onComplete}) ever ask for: no compare-and-set.
   */
  final boolean settleAlone() {
    if (done != 0) {
      return false;
    }
    DONE.lazySet(this, 1);
    return true;
  }

  @Override
  public final Context currentContext() {
    return actual.currentContext();
  }

  @Override
  public final void onSubscribe(Subscription s) {
    if (Operators.validate(this.s, s)) {
      this.s = s;
      actual.onSubscribe(this);
    }
  }

  /** Checks Reactive Streams rule 2.13. */
  final void checkNotNull(@Nullable T t) {
    if (t == null) {
      throw new NullPointerException("onNext(null) in " + operatorName() + ": Reactive Streams rule 2.13");
    }
  }

  @Override
  public final void request(long n) {
    s.request(n);
  }

  @Override
  @Nullable
  public final Object scanUnsafe(Attr key) {
    return key == Attr.NAME ? operatorName() : Lift.scanRelay(key, s, actual, done == 1);
  }
}
