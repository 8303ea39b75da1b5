package io.breakwater.retry;

import io.breakwater.internal.retry.TokenBucketRetryBudget;
import reactor.core.publisher.Mono;

/**
 * A per-dependency budget that keeps retries below a share of the requests, so that a failing dependency is not
 * hit by a retry storm (gRPC retry throttling, Finagle's {@code RetryBudget}). Every call deposits a fraction of a
 * token; every retry withdraws a whole one.
 *
 * <pre>{@code
 * RetryBudget flights = RetryBudget.ofDefaults();   // 15 % of calls, 10 tokens: share it explicitly
 * RetryPolicy search = RetryPolicy.builder().name("flights").budget(flights).build();
 * RetryPolicy book = RetryPolicy.builder().name("flights").maxRetries(1).budget(flights).build();
 * }</pre>
 *
 * <p>A {@link RetryPolicy} built without a budget gets its own {@link #ofDefaults()}: nothing is shared unless the
 * same instance is passed to several policies.
 *
 * <p>This is an SPI: the in-memory default lives in one JVM, a shared store (e.g. Redis) can implement it to share
 * one budget across instances. Implementations must be thread-safe. {@link #onRequest()} and {@link #onSuccess()}
 * run on every call, so they must not allocate, block or take a lock (a shared store batches deposits locally);
 * only {@link #tryAcquire(long)}, which runs on failures, may do I/O.
 */
public interface RetryBudget {

  /** Called once per call (subscription), before the first attempt. */
  void onRequest();

  /**
   * Called once per call that succeeded (completed without error, after any number of attempts), so that a budget
   * can refill on success, e.g. 50 tokens, 5 per retry, +1 per success. Does nothing by default.
   */
  default void onSuccess() {}

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
   * A new in-memory bucket with the defaults every policy without a budget gets: each call deposits 0.15 of a
   * token, each retry takes one, it holds 10 and starts full, and no floor accrues with time. In a full outage
   * retries stay under 15 % of requests at any call rate (at 1, 20 and 200 calls/s over 10 minutes: 14.2 %,
   * 13.1 % and 13.0 %), while a lone failure among healthy calls, even at 1 call a minute, gets all its retries.
   * It keeps up with a dependency that fails up to about 13 % of calls (each failing call retried until it
   * succeeds); above that, some failures go unretried and {@code breakwater.retry.rejections} counts them.
   */
  static RetryBudget ofDefaults() {
    return new TokenBucketRetryBudget(TokenBucketRetryBudget.DEFAULT_RATIO, 0,
        TokenBucketRetryBudget.DEFAULT_CAPACITY);
  }

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
