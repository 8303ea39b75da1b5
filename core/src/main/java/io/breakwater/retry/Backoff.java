package io.breakwater.retry;

import io.breakwater.internal.Saturating;
import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * How long to wait before a retry. Every shape keeps its jitter <b>inside the cap</b>: a delay never exceeds
 * {@code cap}, and at the cap the delays still spread out instead of collapsing onto it (Resilience4j's randomized
 * backoff clamps to the cap, so callers that reached it retry in lockstep).
 *
 * <table>
 *   <caption>Shapes (n = 0 for the first retry)</caption>
 *   <tr><th>factory</th><th>delay before retry n</th></tr>
 *   <tr><td>{@link #fullJitter} (the default)</td><td>uniform(0, min(cap, base·2ⁿ))</td></tr>
 *   <tr><td>{@link #equalJitter}</td><td>e/2 + uniform(0, e/2), e = min(cap, base·2ⁿ)</td></tr>
 *   <tr><td>{@link #decorrelatedJitter}</td><td>min(cap, uniform(base, previous·3)), previous = base at first</td></tr>
 *   <tr><td>{@link #exponential}</td><td>c·(1 + f·uniform(−1, 1)), c = min(base·2ⁿ, cap/(1 + f))</td></tr>
 *   <tr><td>{@link #fixed}</td><td>the delay, every time (no jitter: synchronised callers stay synchronised)</td></tr>
 * </table>
 *
 * <pre>{@code
 * RetryPolicy policy = RetryPolicy.builder()
 *     .backoff(Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(5)))
 *     .build();
 * }</pre>
 *
 * <p>The random source is passed in by the caller ({@link RetryPolicy.Builder#random}), so tests seed it. Instances
 * are immutable and thread-safe.
 */
public final class Backoff {

  private enum Shape {
    FULL_JITTER, EQUAL_JITTER, DECORRELATED_JITTER, EXPONENTIAL, FIXED
  }

  private final Shape shape;
  private final long baseNanos;
  private final long capNanos;
  private final double jitterFraction;

  private Backoff(Shape shape, long baseNanos, long capNanos, double jitterFraction) {
    this.shape = shape;
    this.baseNanos = baseNanos;
    this.capNanos = capNanos;
    this.jitterFraction = jitterFraction;
  }

  /** uniform(0, min(cap, base·2ⁿ)): the AWS "full jitter" backoff; spreads synchronised callers the most. */
  public static Backoff fullJitter(Duration base, Duration cap) {
    return of(Shape.FULL_JITTER, base, cap, 0.0);
  }

  /** e/2 + uniform(0, e/2) with e = min(cap, base·2ⁿ): never less than half the exponential delay. */
  public static Backoff equalJitter(Duration base, Duration cap) {
    return of(Shape.EQUAL_JITTER, base, cap, 0.0);
  }

  /** min(cap, uniform(base, previous·3)), previous = base before the first retry. */
  public static Backoff decorrelatedJitter(Duration base, Duration cap) {
    return of(Shape.DECORRELATED_JITTER, base, cap, 0.0);
  }

  /**
   * base·2ⁿ, spread by ±{@code jitterFraction} of itself, and kept inside the cap by lowering the centre of the
   * spread: c·(1 + f·uniform(−1, 1)) with c = min(base·2ⁿ, cap/(1 + f)). A fraction of 0 gives plain exponential
   * backoff.
   */
  public static Backoff exponential(Duration base, Duration cap, double jitterFraction) {
    if (!(jitterFraction >= 0.0 && jitterFraction <= 1.0)) {
      throw new IllegalArgumentException("jitterFraction is " + jitterFraction
          + ": give a share of the delay from 0 (no jitter) to 1 (e.g. 0.2)");
    }
    return of(Shape.EXPONENTIAL, base, cap, jitterFraction);
  }

  /** The same delay before every retry. Avoid it against shared dependencies: it keeps callers in lockstep. */
  public static Backoff fixed(Duration delay) {
    return of(Shape.FIXED, delay, delay, 0.0);
  }

  private static Backoff of(Shape shape, Duration base, Duration cap, double jitterFraction) {
    Objects.requireNonNull(base, "base");
    Objects.requireNonNull(cap, "cap");
    if (base.isNegative()) {
      throw new IllegalArgumentException("Backoff base is " + base + ": give zero or a positive duration");
    }
    if (cap.compareTo(base) < 0) {
      throw new IllegalArgumentException("Backoff cap " + cap + " is below its base " + base
          + ": give a cap at least as long as the base");
    }
    return new Backoff(shape, Saturating.nanos(base), Saturating.nanos(cap), jitterFraction);
  }

  /** The delay before the first retry's exponential step (for {@link #fixed}, the delay). */
  public Duration base() {
    return Duration.ofNanos(baseNanos);
  }

  /** The longest delay this backoff ever gives. */
  public Duration cap() {
    return Duration.ofNanos(capNanos);
  }

  /**
   * The same shape with another base (and a cap raised to at least that base), as used for failure kinds that need
   * a longer first delay (rate limits, timeouts).
   */
  public Backoff withBase(Duration base) {
    Objects.requireNonNull(base, "base");
    long b = Saturating.nanos(base);
    return shape == Shape.FIXED ? new Backoff(shape, b, b, 0.0) : new Backoff(shape, b, Math.max(capNanos, b),
        jitterFraction);
  }

  /**
   * The delay before retry {@code n} (0 for the first retry), in nanoseconds.
   *
   * @param n how many retries were made before this one
   * @param previousNanos the delay before the previous retry (used by {@link #decorrelatedJitter}; ignored before
   *     the first retry)
   * @param random the random source; not shared across threads by this method
   */
  public long delayNanos(int n, long previousNanos, RandomGenerator random) {
    switch (shape) {
      case FIXED:
        return baseNanos;
      case FULL_JITTER:
        return (long) (random.nextDouble() * exponential(n));
      case EQUAL_JITTER: {
        long e = exponential(n);
        return e / 2 + (long) (random.nextDouble() * (e - e / 2));
      }
      case DECORRELATED_JITTER: {
        long previous = n == 0 ? baseNanos : Math.max(previousNanos, baseNanos);
        long high = previous > Long.MAX_VALUE / 3 ? Long.MAX_VALUE : previous * 3;
        long delay = baseNanos + (long) (random.nextDouble() * (high - baseNanos));
        return Math.min(capNanos, delay);
      }
      case EXPONENTIAL: {
        double centre = Math.min(exponential(n), capNanos / (1.0 + jitterFraction));
        double spread = jitterFraction == 0.0 ? 0.0 : jitterFraction * (2.0 * random.nextDouble() - 1.0);
        return Math.min(capNanos, (long) (centre * (1.0 + spread)));
      }
      default:
        throw new IllegalStateException("unknown backoff shape " + shape);
    }
  }

  /** min(cap, base·2ⁿ) without overflow. */
  private long exponential(int n) {
    if (n >= 62 || baseNanos > (capNanos >> Math.min(n, 62))) {
      return capNanos;
    }
    return Math.min(capNanos, baseNanos << n);
  }

  /** Backoffs of the same shape, base, cap and jitter fraction are equal: they give the same delays. */
  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof Backoff b && shape == b.shape && baseNanos == b.baseNanos && capNanos == b.capNanos
        && Double.compare(jitterFraction, b.jitterFraction) == 0;
  }

  @Override
  public int hashCode() {
    int h = shape.ordinal();   // no boxing: asked on every call that builds its retry inline
    h = 31 * h + Long.hashCode(baseNanos);
    h = 31 * h + Long.hashCode(capNanos);
    return 31 * h + Double.hashCode(jitterFraction);
  }

  @Override
  public String toString() {
    String name = switch (shape) {
      case FULL_JITTER -> "fullJitter";
      case EQUAL_JITTER -> "equalJitter";
      case DECORRELATED_JITTER -> "decorrelatedJitter";
      case EXPONENTIAL -> "exponential";
      case FIXED -> "fixed";
    };
    return shape == Shape.FIXED ? name + "(" + base() + ")"
        : name + "(" + base() + ", " + cap() + (shape == Shape.EXPONENTIAL ? ", " + jitterFraction : "") + ")";
  }
}
