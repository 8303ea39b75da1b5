package io.breakwater.internal.limit;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.limit.CallWeight;
import io.breakwater.limit.RateLimit;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.scheduler.Scheduler;

/**
 * What every {@link RateLimit} is underneath: something that admits a call once its permits are taken, and settles
 * them when it ends. The in-memory limit and the Redis one extend it; {@code throttledBy} accepts nothing else.
 */
public abstract class RateEngine implements RateLimit {

  /** The limit's settings: a shared limit built from this one as a template takes them. */
  public abstract RateSettings settings();

  final Scheduler scheduler() {
    return settings().scheduler().get();
  }

  /** The limit's clock, in nanoseconds. */
  final long now() {
    return scheduler().now(TimeUnit.NANOSECONDS);
  }

  /** The limit's clock in epoch milliseconds, to turn reset instants into durations. */
  final long epochMillis() {
    return scheduler().now(TimeUnit.MILLISECONDS);
  }

  /** {@code nanos} as a duration; {@code null} for {@link Long#MAX_VALUE}, which means never. */
  @Nullable
  static Duration duration(long nanos) {
    return nanos == Long.MAX_VALUE ? null : Duration.ofNanos(nanos);
  }

  /**
   * Subscribes {@code actual} to {@code source} once the call's permits are taken, or fails it with a
   * {@link io.breakwater.limit.LimitExceededException} without subscribing {@code source}.
   */
  public abstract <T> void subscribe(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono,
      CallWeight<? super T> weight);

  /** A call ended: its actual usage ({@code -1} when unknown) replaces its estimate. */
  abstract void completed(ThrottleSubscriber<?> call, long actualTokens);

  /** A call failed: learn from an HTTP answer in the error; give back what a call refused before the wire took. */
  abstract void failed(ThrottleSubscriber<?> call, Throwable error, long actualTokens);

  /** A call's element carried the provider's headers. */
  abstract void headers(ThrottleSubscriber<?> call, java.util.Map<String, ? extends java.util.List<String>> headers);

  /** The {@link HttpStatusException} that {@code failure} is or wraps (a few causes deep), or {@code null}. */
  @Nullable
  static HttpStatusException httpOf(Throwable failure) {
    Throwable current = Exceptions.unwrap(failure);
    for (int depth = 0; current != null && depth < 8; depth++) {
      if (current instanceof HttpStatusException h) {
        return h;
      }
      Throwable cause = current.getCause();
      current = cause == current ? null : cause;
    }
    return null;
  }

  /**
   * Whether {@code error} was raised by Breakwater before the call could reach the dependency: an open breaker or
   * another limit refused it, so its permits go back.
   */
  static boolean neverSent(Throwable error) {
    return error instanceof BreakwaterException b
        && (b.failureKind() == FailureKind.CIRCUIT_OPEN || b.failureKind() == FailureKind.LIMIT_EXCEEDED);
  }
}
