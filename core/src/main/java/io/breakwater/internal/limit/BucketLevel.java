package io.breakwater.internal.limit;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One token bucket as {@link RateBuckets} publishes it for calls that take permits without its owner's lock: the
 * refill law in force since {@code origin} (immutable) and the level as one atomic word, changed by compare-and-set.
 *
 * <p>The word is {@code base}, a double: the level at {@code origin} minus every permit taken since, plus every permit
 * given back, so that the level at {@code now} is {@code min(cap, base + refill(origin, now))}, as in the generic cell
 * rate algorithm. Taking from a full bucket first drops what overflowed the cap. A clock that went back refills
 * nothing. When the owner changes the law (a provider's headers, a 429) it {@link #retire retires} the word, so that
 * no compare-and-set on it succeeds again, and publishes a new {@code BucketLevel}.
 */
final class BucketLevel {

  /** The outcome of {@link #take} and {@link #add}: done. */
  static final int DONE = 1;
  /** {@link #take}: the bucket does not hold the permits. */
  static final int SHORT = 0;
  /** The owner retired this level: ask it, under its lock. */
  static final int RETIRED = -1;

  /** A NaN that no arithmetic here produces: the retired word. */
  private static final long RETIRED_BITS = 0x7ff0_dead_0000_beefL;

  final double cap;
  private final double rate;
  private final double pacedRate;
  private final long pacedUntil;
  private final long origin;
  private final double reserve;
  private final long reserveAt;

  @SuppressWarnings("unused") // through BASE
  private volatile long base;
  private static final VarHandle BASE;

  static {
    try {
      BASE = MethodHandles.lookup().findVarHandle(BucketLevel.class, "base", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  BucketLevel(double level, long origin, double cap, double rate, double pacedRate, long pacedUntil, double reserve,
      long reserveAt) {
    this.cap = cap;
    this.rate = rate;
    this.pacedRate = pacedRate;
    this.pacedUntil = pacedUntil;
    this.origin = origin;
    this.reserve = reserve;
    this.reserveAt = reserveAt;
    this.base = Double.doubleToRawLongBits(level);
  }

  /** Whether the bucket has no limit: its level is infinite and nothing is ever taken from it. */
  boolean unlimited() {
    return cap == Double.POSITIVE_INFINITY;
  }

  /** What refilled from {@code origin} to {@code now}, without the cap; the order of {@link RateBuckets#refill}. */
  private double refilled(double from0, long now) {
    double level = from0;
    long from = origin;
    if (now - from <= 0) {
      return level;
    }
    if (pacedUntil - from > 0) {
      long to = now - pacedUntil < 0 ? now : pacedUntil;
      level += pacedRate * (to - from);
      from = to;
    }
    if (now - from > 0) {
      level += rate * (now - from);
    }
    return level;
  }

  /** The reserve at {@code now}: the one published, faded since it was set. */
  double reserve(long now) {
    return reserve == 0 ? 0 : reserve * Math.exp(-RateBuckets.RESERVE_DECAY_PER_NANO * Math.max(0, now - reserveAt));
  }

  /**
   * Takes {@code permits} if the level at {@code now}, less the reserve, holds them: {@link #DONE}, {@link #SHORT}
   * or {@link #RETIRED}. Taking zero permits only checks that the level is not below the reserve.
   */
  int take(double permits, long now) {
    return unlimited() ? DONE : change(-permits, true, now);
  }

  /**
   * Adds {@code permits} (negative: takes them whatever the level) without passing the cap: {@link #DONE} or
   * {@link #RETIRED}.
   */
  int add(double permits, long now) {
    return unlimited() || permits == 0 ? DONE : change(permits, false, now);
  }

  /** Adds {@code delta} to the level at {@code now}; if {@code check}, only when the level less the reserve holds it. */
  private int change(double delta, boolean check, long now) {
    for (;;) {
      long bits = (long) BASE.getVolatile(this);
      if (bits == RETIRED_BITS) {
        return RETIRED;
      }
      double b = Double.longBitsToDouble(bits);
      double unclamped = refilled(b, now);
      double level = unclamped > cap ? cap : unclamped;
      if (check && level - reserve(now) < -delta) {
        return SHORT;
      }
      if (delta == 0) {
        return DONE;
      }
      double after = level + delta;
      // what overflowed the cap is dropped first; otherwise the base moves by exactly delta
      double next = unclamped <= cap && after <= cap ? b + delta : Math.min(cap, after) - refilled(0, now);
      if (BASE.compareAndSet(this, bits, Double.doubleToRawLongBits(next))) {
        return DONE;
      }
    }
  }

  /** The level at {@code now}, or NaN once retired. */
  double level(long now) {
    long bits = (long) BASE.getVolatile(this);
    if (bits == RETIRED_BITS) {
      return Double.NaN;
    }
    double unclamped = refilled(Double.longBitsToDouble(bits), now);
    return unclamped > cap ? cap : unclamped;
  }

  /**
   * Stops every compare-and-set on this level and returns the level at {@code now} ({@code origin} if the clock went
   * back). Called by the owner, under its lock, once.
   */
  double retire(long now) {
    long bits = (long) BASE.getAndSet(this, RETIRED_BITS);
    double unclamped = refilled(Double.longBitsToDouble(bits), now);
    return unclamped > cap ? cap : unclamped;
  }

  long origin() {
    return origin;
  }
}
