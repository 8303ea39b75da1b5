package io.breakwater.internal;

import java.time.Duration;

/**
 * Arithmetic on nanosecond instants and durations that stops at {@code Long.MIN_VALUE} / {@code Long.MAX_VALUE}
 * instead of wrapping round. Every number that comes from outside (a header, a configured duration) becomes a time
 * through these, so that a huge value means "as late as possible", never "in the past".
 */
public final class Saturating {

  /**
   * The longest delay asked of a scheduler, 2<sup>61</sup> ns (about 73 years). A virtual clock adds a delay to its
   * own time without saturating, so a longer one (a saturated "forever") wraps round into the past on a clock past
   * about 1.8 × 10<sup>18</sup> ns, where Reactor's default clock (milliseconds since 1970) stands, and the task runs
   * at once. A timer asked for longer runs after this: 73 years count as forever.
   */
  public static final long MAX_DELAY_NANOS = 1L << 61;

  private Saturating() {}

  /** {@code nanos} as a delay to ask of a scheduler: at most {@link #MAX_DELAY_NANOS}. */
  public static long delayNanos(long nanos) {
    return Math.min(nanos, MAX_DELAY_NANOS);
  }

  /** {@code d} as a delay to ask of a scheduler: saturated, and at most {@link #MAX_DELAY_NANOS}. */
  public static Duration delay(Duration d) {
    return Duration.ofNanos(delayNanos(nanos(d)));
  }

  /** {@code a + b}, or the bound it overflowed past. */
  public static long add(long a, long b) {
    long r = a + b;
    if (((a ^ r) & (b ^ r)) < 0) {
      return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return r;
  }

  /** {@code a × b}, or the bound it overflowed past. */
  public static long multiply(long a, long b) {
    long high = Math.multiplyHigh(a, b);
    long low = a * b;
    if ((high == 0 && low >= 0) || (high == -1 && low < 0)) {
      return low;
    }
    return (a < 0) == (b < 0) ? Long.MAX_VALUE : Long.MIN_VALUE;
  }

  /** {@code d} in nanoseconds, {@code Long.MAX_VALUE} (292 years) or {@code Long.MIN_VALUE} beyond that. */
  public static long nanos(Duration d) {
    long seconds = d.getSeconds();
    if (seconds >= Long.MAX_VALUE / 1_000_000_000L) {
      return Long.MAX_VALUE;
    }
    if (seconds <= Long.MIN_VALUE / 1_000_000_000L) {
      return Long.MIN_VALUE;
    }
    return seconds * 1_000_000_000L + d.getNano();
  }

  /**
   * {@code d} in milliseconds, as {@link Duration#toMillis()} counts them, or {@code Long.MAX_VALUE} /
   * {@code Long.MIN_VALUE} from the last whole second below what a long holds (where {@code toMillis()} throws).
   */
  public static long millis(Duration d) {
    long seconds = d.getSeconds();
    long nanos = d.getNano();
    if (seconds < 0) {   // as toMillis() does: towards zero, so that -1 ns is 0 ms
      seconds++;
      nanos -= 1_000_000_000L;
    }
    if (seconds >= Long.MAX_VALUE / 1_000L) {
      return Long.MAX_VALUE;
    }
    if (seconds <= Long.MIN_VALUE / 1_000L) {
      return Long.MIN_VALUE;
    }
    return seconds * 1_000L + nanos / 1_000_000L;
  }
}
