package io.breakwater.internal.limit;

import reactor.core.CoreSubscriber;

/**
 * Relays one call that holds a permit of a fixed concurrency limit and gives the permit back, exactly once, when the
 * call terminates or is cancelled — before the terminal signal goes downstream, so that the next call of a sequence
 * finds it free. A {@code Mono}'s value is its end: the permit goes back before the value goes downstream, because
 * {@code Mono.subscribe(value, error, complete)} and {@code then} chains take the value as the end and start what
 * follows it before the source's {@code onComplete}. It holds nothing but what that needs: the common path of
 * {@code limitedBy(fixed)} is one compare-and-set to take the permit, one to settle the call and one decrement to give
 * the permit back.
 * {@link AdaptivePermitSubscriber} also times the call for an adaptive limit.
 */
class PermitSubscriber<T> extends PermitRelay<T> {

  final LocalPermits limit;
  final boolean mono;

  PermitSubscriber(CoreSubscriber<? super T> actual, LocalPermits limit, boolean mono) {
    super(actual);
    this.limit = limit;
    this.mono = mono;
  }

  @Override
  final String operatorName() {
    return "limitedBy(" + limit.name() + ")";
  }

  @Override
  public void onNext(T t) {
    checkNotNull(t);
    if (mono && settle()) {
      limit.release();
    }
    actual.onNext(t);
  }

  @Override
  public void onError(Throwable t) {
    if (settle()) {
      limit.release();
    }
    actual.onError(t);
  }

  @Override
  public void onComplete() {
    if (settle()) {
      limit.release();
    }
    actual.onComplete();
  }

  @Override
  public final void cancel() {
    s.cancel();
    if (settle()) {
      limit.release();
    }
  }
}
