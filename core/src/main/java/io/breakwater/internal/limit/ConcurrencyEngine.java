package io.breakwater.internal.limit;

import io.breakwater.limit.ConcurrencyLimit;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;

/**
 * What every {@link ConcurrencyLimit} is underneath: something that runs a subscription through its permits. The
 * in-memory limit and the Redis one extend it; {@code limitedBy} accepts nothing else.
 */
public abstract class ConcurrencyEngine implements ConcurrencyLimit {

  /** The limit's settings: a shared limit built from this one as a template takes them. */
  public abstract ConcurrencySettings settings();

  /**
   * Subscribes {@code actual} to {@code source} once a permit is held, or fails it with a
   * {@link io.breakwater.limit.LimitExceededException} without subscribing {@code source}. The permit is given
   * back, exactly once, when the call terminates or is cancelled.
   */
  public abstract <T> void subscribe(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono);
}
