package io.breakwater.internal.limit;

import reactor.core.CoreSubscriber;

/**
 * A {@link PermitSubscriber} for an adaptive limit: it also reports the call's latency (to its element for a
 * {@code Mono}, to its first element or its end for a {@code Flux}) and whether it failed with a drop; a cancelled
 * call reports nothing.
 */
final class AdaptivePermitSubscriber<T> extends PermitSubscriber<T> {

  /** When the call started, on the limit's clock. */
  private final long start;
  /** Whether an element came, and when. */
  private boolean first;
  private long firstAt;

  AdaptivePermitSubscriber(CoreSubscriber<? super T> actual, LocalPermits limit, boolean mono) {
    super(actual, limit, mono);
    this.start = limit.now();
  }

  @Override
  public void onNext(T t) {
    checkNotNull(t);
    if (!first) {
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
      limit.release(start, first ? firstAt : limit.now(), limit.isDrop(t));
    }
    actual.onError(t);
  }

  @Override
  public void onComplete() {
    if (settle()) {
      limit.release(start, first ? firstAt : limit.now(), false);
    }
    actual.onComplete();
  }
}
