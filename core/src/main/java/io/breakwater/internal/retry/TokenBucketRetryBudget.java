package io.breakwater.internal.retry;

import io.breakwater.internal.Saturating;
import io.breakwater.retry.RetryBudget;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import reactor.core.publisher.Mono;

/**
 * The in-memory {@link RetryBudget}: a balance of milli-tokens in one atomic long. A call adds {@code ratio} of a
 * token with one atomic add (no allocation, no lock; the balance may overshoot the capacity by the deposits of
 * concurrent calls, which the next withdrawal trims); a retry takes 1000 milli-tokens after adding the floor that
 * accrued since the last retry.
 *
 * <p>Time is whatever the caller's scheduler says. A clock that goes backwards (a new
 * {@code VirtualTimeScheduler} starts at 0) is another clock: the bucket starts a fresh epoch, full, instead of
 * waiting, frozen, for the new clock to catch up with the old one.
 */
public final class TokenBucketRetryBudget implements RetryBudget {

  public static final RetryBudget UNLIMITED = new RetryBudget() {
    @Override
    public void onRequest() {}

    @Override
    public Mono<Boolean> tryAcquire(long nowMillis) {
      return GRANTED;
    }

    @Override
    public double level() {
      return Double.POSITIVE_INFINITY;
    }

    @Override
    public String toString() {
      return "RetryBudget.unlimited()";
    }
  };

  private static final Mono<Boolean> GRANTED = Mono.just(Boolean.TRUE);
  private static final Mono<Boolean> REFUSED = Mono.just(Boolean.FALSE);
  private static final long TOKEN = 1000L;

  private final double ratio;
  private final double minPerSecond;
  private final long depositMilli;
  private final long capacityMilli;

  private volatile long balance;
  private static final AtomicLongFieldUpdater<TokenBucketRetryBudget> BALANCE =
      AtomicLongFieldUpdater.newUpdater(TokenBucketRetryBudget.class, "balance");

  /** Guarded by {@code this}; only touched on the failure path. */
  private long lastRefillMillis = Long.MIN_VALUE;

  public TokenBucketRetryBudget(double ratio, double minRetriesPerSecond, double capacity) {
    validate(ratio, minRetriesPerSecond, capacity);
    this.ratio = ratio;
    this.minPerSecond = minRetriesPerSecond;
    this.depositMilli = Math.round(ratio * TOKEN);
    this.capacityMilli = Math.round(capacity * TOKEN);
    this.balance = capacityMilli;
  }

  /** The share of calls the default budget lets be retried. */
  public static final double DEFAULT_RATIO = 0.15;
  /** The tokens the default budget holds (and starts with). */
  public static final double DEFAULT_CAPACITY = 10;

  /** The capacity of a bucket whose capacity was not given: ten seconds of the floor, at least 10 tokens. */
  public static double defaultCapacity(double minRetriesPerSecond) {
    return Math.max(10.0, 10.0 * minRetriesPerSecond);
  }

  /**
   * Refuses a token bucket's settings with a message that says what to change; shared by every {@code RetryBudget}
   * built on a token bucket, in memory or in Redis.
   */
  public static void validate(double ratio, double minRetriesPerSecond, double capacity) {
    if (!(ratio >= 0.0 && ratio <= 1.0)) {
      throw new IllegalArgumentException("Retry budget ratio is " + ratio
          + ": give the share of calls that may be retried, from 0 to 1 (e.g. 0.1 for 10 %)");
    }
    if (!(minRetriesPerSecond >= 0.0) || Double.isInfinite(minRetriesPerSecond)) {
      throw new IllegalArgumentException("Retry budget minRetriesPerSecond is " + minRetriesPerSecond
          + ": give zero or a positive number of retries per second (e.g. 10)");
    }
    if (!(capacity >= 1.0) || Double.isInfinite(capacity)) {
      throw new IllegalArgumentException("Retry budget capacity is " + capacity + ": give at least 1 token");
    }
  }

  @Override
  public void onRequest() {
    if (depositMilli != 0 && balance < capacityMilli) {
      BALANCE.getAndAdd(this, depositMilli);
    }
  }

  @Override
  public Mono<Boolean> tryAcquire(long nowMillis) {
    return tryAcquireNow(nowMillis) ? GRANTED : REFUSED;
  }

  /** Synchronous form of {@link #tryAcquire(long)}. */
  public synchronized boolean tryAcquireNow(long nowMillis) {
    if (lastRefillMillis != Long.MIN_VALUE && nowMillis < lastRefillMillis) {
      lastRefillMillis = Long.MIN_VALUE;   // another clock: a fresh epoch
      balance = capacityMilli;
    }
    long accrued = 0;
    if (lastRefillMillis != Long.MIN_VALUE && nowMillis > lastRefillMillis) {
      accrued = (long) ((nowMillis - lastRefillMillis) * minPerSecond);   // ms × tokens/s = milli-tokens
    }
    if (lastRefillMillis == Long.MIN_VALUE || nowMillis > lastRefillMillis) {
      lastRefillMillis = nowMillis;
    }
    for (;;) {
      long current = balance;
      long next = Math.min(capacityMilli, Saturating.add(current, accrued));   // accrued saturates at a huge floor
      boolean granted = next >= TOKEN;
      if (granted) {
        next -= TOKEN;
      }
      if (BALANCE.compareAndSet(this, current, next)) {
        return granted;
      }
    }
  }

  @Override
  public double level() {
    return Math.min(balance, capacityMilli) / (double) TOKEN;
  }

  @Override
  public String toString() {
    return "RetryBudget.ratio(" + ratio + ", " + minPerSecond + "/s, capacity " + capacityMilli / TOKEN + ")";
  }
}
