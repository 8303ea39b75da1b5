package io.breakwater.internal.limit;

import java.time.Duration;

/** Saturating nanosecond arithmetic for limits: durations and instants never overflow into the past. */
final class Nanos {

  private Nanos() {}

  /** {@code d} in nanoseconds, {@link Long#MAX_VALUE} when it does not fit; negative durations stay negative. */
  static long of(Duration d) {
    if (d.getSeconds() >= Long.MAX_VALUE / 1_000_000_000L - 1) {
      return Long.MAX_VALUE;
    }
    if (d.getSeconds() <= Long.MIN_VALUE / 1_000_000_000L + 1) {
      return Long.MIN_VALUE;
    }
    return d.toNanos();
  }

  /** {@code a + b}, saturated at the bounds of a long. */
  static long add(long a, long b) {
    long r = a + b;
    if (((a ^ r) & (b ^ r)) < 0) {
      return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return r;
  }
}
