package io.breakwater.internal.limit;

import reactor.core.CoreSubscriber;

/**
 * Relays one call that holds a concurrency permit and gives the permit back, exactly once, when the call terminates
 * or is cancelled — before the terminal signal goes downstream, so that the next call of a sequence finds it free.
 * For an adaptive limit it also reports the call's latency (to its element for a {@code Mono}, to its first element
 * or its end for a {@code Flux}) and whether it failed with a drop; a cancelled call reports nothing.
 */
final class PermitSubscriber<T> extends PermitRelay<T> {

  private final LocalConcurrencyLimit limit;
  private final boolean mono;
  /** When the call started, on the limit's clock; only read by an adaptive limit. */
  private final long start;
  /** Whether an element came, and when; only set by an adaptive limit. */
  private boolean first;
  private long firstAt;

  PermitSubscriber(CoreSubscriber<? super T> actual, LocalConcurrencyLimit limit, boolean mono, long start) {
    super(actual);
    this.limit = limit;
    this.mono = mono;
    this.start = start;
  }

  @Override
  String operatorName() {
    return "limitedBy(" + limit.name() + ")";
  }

  @Override
  public void onNext(T t) {
    checkNotNull(t);
    if (!first && limit.adaptive()) {
      first = true;
      firstAt = limit.now();
      if (mono && settle()) {
        limit.release(start, firstAt, false);
      }
    }
    actual.onNext(t);
  }

  @Override
  public void onError(Throwable t) {
    if (settle()) {
      if (limit.adaptive()) {
        limit.release(start, first ? firstAt : limit.now(), limit.isDrop(t));
      } else {
        limit.release();
      }
    }
    actual.onError(t);
  }

  @Override
  public void onComplete() {
    if (settle()) {
      if (limit.adaptive()) {
        limit.release(start, first ? firstAt : limit.now(), false);
      } else {
        limit.release();
      }
    }
    actual.onComplete();
  }

  @Override
  public void cancel() {
    s.cancel();
    if (settle()) {
      limit.release();
    }
  }
}
