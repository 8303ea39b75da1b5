package io.breakwater.agent;

import java.time.Duration;
import java.util.Objects;

/**
 * How long one attempt of a tool may take. Either {@link #fixed(Duration)}, or {@link #adaptive()}: learnt from the
 * latencies of the tool's successful calls.
 *
 * <pre>{@code
 * CallTimeouts.adaptive()                 // p99 + 250 ms, within [500 ms, 30 s]; 30 s until 50 calls and 1 min
 *     .percentile(99.9).buffer(Duration.ofMillis(500)).bounds(Duration.ofSeconds(1), Duration.ofSeconds(20))
 *     .warmUp(100, Duration.ofMinutes(2))
 *     .build();
 * }</pre>
 *
 * <p><b>Adaptive.</b> Each tool keeps an HdrHistogram of the durations of its successful attempts, measured on the
 * scheduler's clock. The timeout of an attempt is the chosen percentile (default p99) of it plus a buffer (default
 * 250 ms), or, with {@link Builder#meanPlusSigmas(double)}, mean + k × standard deviation plus the buffer; then
 * clamped to [min, max]. It starts conservative: until the tool has {@code warmUpSamples} successes <em>and</em>
 * {@code warmUpTime} has passed since the first of them, every attempt gets {@code max}, so a handful of fast calls
 * at start-up (before the process gets busy: JIT compilation, a burst of streams) cannot teach it a floor that its own
 * slowness then breaks. It is computed when each attempt is subscribed, and the result is given to
 * {@code perCallTimeout(max)}: the attempt gets min(this, the deadline's per-call budget), and never more than the
 * time left before the deadline.
 *
 * <p>Failures and timeouts are not recorded: a timeout would only teach the histogram the timeout itself. The
 * histogram is per tool and lives as long as the {@link Tool}; it is not windowed, so build a new tool (or accept
 * slow adaptation) after a lasting change of the dependency's latency. Immutable and thread-safe.
 */
public final class CallTimeouts {

  /** Default percentile of adaptive timeouts: 99. */
  public static final double DEFAULT_PERCENTILE = 99.0;
  /** Default buffer added to the learnt latency: 250 ms. */
  public static final Duration DEFAULT_BUFFER = Duration.ofMillis(250);
  /** Default least adaptive timeout: 500 ms. */
  public static final Duration DEFAULT_MIN = Duration.ofMillis(500);
  /** Default greatest adaptive timeout: 30 s (the deadline's per-call cap still applies, 12 s by default). */
  public static final Duration DEFAULT_MAX = Duration.ofSeconds(30);
  /** Default number of successes before the learnt timeout is used: 50. */
  public static final int DEFAULT_WARM_UP_SAMPLES = 50;
  /** Default time, from the first success, before the learnt timeout is used: 1 minute. */
  public static final Duration DEFAULT_WARM_UP_TIME = Duration.ofMinutes(1);

  private final boolean adaptive;
  private final double percentile;
  private final double sigmas;
  private final Duration buffer;
  private final Duration min;
  private final Duration max;
  private final Duration warmUpTime;
  private final int warmUpSamples;

  private CallTimeouts(boolean adaptive, double percentile, double sigmas, Duration buffer, Duration min,
      Duration max, Duration warmUpTime, int warmUpSamples) {
    this.adaptive = adaptive;
    this.percentile = percentile;
    this.sigmas = sigmas;
    this.buffer = buffer;
    this.min = min;
    this.max = max;
    this.warmUpTime = warmUpTime;
    this.warmUpSamples = warmUpSamples;
  }

  /** Every attempt gets {@code timeout} (or less: the deadline's per-call budget). */
  public static CallTimeouts fixed(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("fixed timeout is " + timeout + ": give a positive duration");
    }
    return new CallTimeouts(false, 0, 0, Duration.ZERO, timeout, timeout, Duration.ZERO, 0);
  }

  /** Adaptive timeouts with every setting at its default (p99 + 250 ms in [500 ms, 30 s]; 30 s for 50 calls, 1 min). */
  public static CallTimeouts adaptiveDefaults() {
    return adaptive().build();
  }

  /** A builder of adaptive timeouts. */
  public static Builder adaptive() {
    return new Builder();
  }

  public boolean isAdaptive() {
    return adaptive;
  }

  /** The percentile used, or 0 when {@link #sigmas()} is used instead. */
  public double percentile() {
    return percentile;
  }

  /** k in mean + k × σ, or 0 when the percentile is used. */
  public double sigmas() {
    return sigmas;
  }

  public Duration buffer() {
    return buffer;
  }

  public Duration min() {
    return min;
  }

  public Duration max() {
    return max;
  }

  /** How long after the first success the timeout stays at {@link #max()}, at least. */
  public Duration warmUpTime() {
    return warmUpTime;
  }

  /** How many successes the timeout stays at {@link #max()} for, at least. */
  public int warmUpSamples() {
    return warmUpSamples;
  }

  @Override
  public String toString() {
    if (!adaptive) {
      return "CallTimeouts{fixed " + max + "}";
    }
    return "CallTimeouts{" + (sigmas > 0 ? "mean+" + sigmas + "σ" : "p" + percentile) + " + " + buffer + " in ["
        + min + ", " + max + "], " + max + " until " + warmUpSamples + " calls and " + warmUpTime + "}";
  }

  /** Builds adaptive {@link CallTimeouts}; {@link #build()} validates and says what to change. */
  public static final class Builder {
    private double percentile = DEFAULT_PERCENTILE;
    private double sigmas;
    private Duration buffer = DEFAULT_BUFFER;
    private Duration min = DEFAULT_MIN;
    private Duration max = DEFAULT_MAX;
    private Duration warmUpTime = DEFAULT_WARM_UP_TIME;
    private int warmUpSamples = DEFAULT_WARM_UP_SAMPLES;

    private Builder() {}

    /** The latency percentile, in (0, 100]. Default 99. */
    public Builder percentile(double percentile) {
      this.percentile = percentile;
      this.sigmas = 0;
      return this;
    }

    /** Use mean + {@code k} × standard deviation instead of a percentile (e.g. 3). */
    public Builder meanPlusSigmas(double k) {
      this.sigmas = k;
      return this;
    }

    /** Added to the learnt latency. Default 250 ms. */
    public Builder buffer(Duration buffer) {
      this.buffer = Objects.requireNonNull(buffer, "buffer");
      return this;
    }

    /** The learnt timeout is kept within [min, max]. Default [500 ms, 30 s]. */
    public Builder bounds(Duration min, Duration max) {
      this.min = Objects.requireNonNull(min, "min");
      this.max = Objects.requireNonNull(max, "max");
      return this;
    }

    /**
     * Attempts get the upper bound until the tool has {@code samples} successes and {@code time} has passed since the
     * first. Default 50 and 1 minute.
     */
    public Builder warmUp(int samples, Duration time) {
      this.warmUpSamples = samples;
      this.warmUpTime = Objects.requireNonNull(time, "time");
      return this;
    }

    public CallTimeouts build() {
      if (sigmas < 0 || Double.isNaN(sigmas)) {
        throw new IllegalArgumentException("meanPlusSigmas is " + sigmas + ": give a positive k, e.g. 3");
      }
      if (sigmas == 0 && !(percentile > 0 && percentile <= 100)) {
        throw new IllegalArgumentException("percentile is " + percentile + ": give a value in (0, 100], e.g. 99");
      }
      if (buffer.isNegative()) {
        throw new IllegalArgumentException("buffer is " + buffer + ": give zero or a positive duration");
      }
      if (min.isNegative() || min.isZero() || max.compareTo(min) < 0) {
        throw new IllegalArgumentException("bounds are [" + min + ", " + max + "]: give 0 < min <= max");
      }
      if (warmUpTime.isNegative()) {
        throw new IllegalArgumentException("warmUp time is " + warmUpTime + ": give zero or a positive duration, e.g. "
            + "1 minute");
      }
      if (warmUpSamples < 1) {
        throw new IllegalArgumentException("warmUp samples is " + warmUpSamples + ": give 1 or more, e.g. 50");
      }
      return new CallTimeouts(true, sigmas > 0 ? 0 : percentile, sigmas, buffer, min, max, warmUpTime,
          warmUpSamples);
    }
  }
}
