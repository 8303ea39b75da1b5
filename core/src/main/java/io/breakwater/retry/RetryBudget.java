package io.breakwater.retry;

import io.breakwater.internal.retry.TokenBucketRetryBudget;
import reactor.core.publisher.Mono;

/**
 * A per-dependency budget that keeps retries below a share of the requests, so that a failing dependency is not
 * hit by a retry storm (gRPC retry throttling, Finagle's {@code RetryBudget}). Every call deposits a fraction of a
 * token; every retry withdraws a whole one; a small floor of tokens per second lets low-traffic dependencies still
 * retry.
 *
 * <pre>{@code
 * RetryBudget flights = RetryBudget.ratio(0.1, 10);   // retries ≤ 10 % of calls + 10 per second
 * RetryPolicy policy = RetryPolicy.builder().name("flights").budget(flights).build();
 * }</pre>
 *
 * <p>This is an SPI: the in-memory default lives in one JVM, a shared store (e.g. Redis) can implement it to share
 * one budget across instances. Implementations must be thread-safe. {@link #onRequest()} runs on every call, so it
 * must not allocate, block or take a lock (a shared store batches deposits locally); only
 * {@link #tryAcquire(long)}, which runs on failures, may do I/O.
 */
public interface RetryBudget {

  /** Called once per call (subscription), before the first attempt: the success-path hook. */
  void onRequest();

  /**
   * Asks for one retry; emits {@code true} if it may be made (and withdraws a token), {@code false} if not. Never
   * empty; an error counts as a refusal.
   *
   * @param nowMillis the time on the caller's scheduler clock, for budgets that refill with time
   */
  Mono<Boolean> tryAcquire(long nowMillis);

  /** The tokens available now, for the {@code breakwater.retry.budget.level} gauge; may be approximate. */
  double level();

  /**
   * An in-memory token bucket: each call deposits {@code ratio} of a token, each retry withdraws one, and
   * {@code minRetriesPerSecond} tokens accrue per second of the caller's clock. It holds at most 10 seconds' worth
   * of the floor (at least 10 tokens) and starts full. Lock-free on the success path.
   *
   * @param ratio the share of calls that may be retried, in [0, 1] (e.g. 0.1)
   * @param minRetriesPerSecond retries allowed per second whatever the traffic, at least 0 (e.g. 10)
   */
  static RetryBudget ratio(double ratio, double minRetriesPerSecond) {
    return new TokenBucketRetryBudget(ratio, minRetriesPerSecond,
        TokenBucketRetryBudget.defaultCapacity(minRetriesPerSecond));
  }

  /** A budget that never refuses; for tests and for dependencies that throttle retries themselves. */
  static RetryBudget unlimited() {
    return TokenBucketRetryBudget.UNLIMITED;
  }
}
