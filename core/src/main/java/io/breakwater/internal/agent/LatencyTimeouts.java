package io.breakwater.internal.agent;

import io.breakwater.agent.CallTimeouts;
import io.breakwater.deadline.Deadline;
import io.breakwater.internal.Saturating;
import org.HdrHistogram.ConcurrentHistogram;
import org.jspecify.annotations.Nullable;

/**
 * The per-tool state of {@link CallTimeouts}: a histogram of successful attempts' durations (microseconds) and the
 * timeout it gives, recomputed every time the sample count grows by 1/64 (at least 1), so reading it is a volatile
 * read on the hot path. Until the warm-up is over (enough samples, and enough time since the first) the timeout is
 * the upper bound. Thread-safe.
 */
public final class LatencyTimeouts {

  private static final long NANOS_PER_MICRO = 1_000L;
  private static final long MIN_NANOS = 1_000_000L;

  private final CallTimeouts config;
  @Nullable
  private final ConcurrentHistogram histogram;
  private final long maxNanos;
  private final long minNanos;
  private final long bufferNanos;
  private final long warmUpNanos;
  private volatile long learntNanos;
  private volatile long learntAtCount;
  /** When the first success was recorded, on the tool's clock; {@link Long#MIN_VALUE} before it. */
  private volatile long firstSampleAt = Long.MIN_VALUE;
  private volatile boolean warm;

  public LatencyTimeouts(CallTimeouts config) {
    this.config = config;
    this.histogram = config.isAdaptive() ? new ConcurrentHistogram(3) : null;
    this.maxNanos = Saturating.nanos(config.max());
    this.minNanos = Saturating.nanos(config.min());
    this.bufferNanos = Saturating.nanos(config.buffer());
    this.warmUpNanos = Saturating.nanos(config.warmUpTime());
    this.learntNanos = maxNanos;
  }

  /** Records the duration of a successful attempt that ended at {@code now} on the tool's clock. */
  public void record(long nanos, long now) {
    if (histogram != null && nanos >= 0) {
      if (firstSampleAt == Long.MIN_VALUE) {
        firstSampleAt = now;
      }
      histogram.recordValue(Math.max(1L, nanos / NANOS_PER_MICRO));
    }
  }

  /** The number of latencies recorded. */
  public long samples() {
    return histogram == null ? 0 : histogram.getTotalCount();
  }

  /** The timeout an attempt starting at {@code now} gets, before the deadline's clamps: learnt, or the upper bound. */
  public long learntNanos(long now) {
    ConcurrentHistogram histogram = this.histogram;
    if (histogram == null || !warm(histogram, now)) {
      return maxNanos;
    }
    long count = histogram.getTotalCount();
    long last = learntAtCount;
    if (count - last >= Math.max(1L, last / 64)) {
      learntNanos = compute(histogram);
      learntAtCount = count;
    }
    return learntNanos;
  }

  /** Whether the warm-up is over at {@code now}: enough samples, and enough time since the first. */
  private boolean warm(ConcurrentHistogram histogram, long now) {
    if (warm) {
      return true;
    }
    long first = firstSampleAt;
    if (first == Long.MIN_VALUE || histogram.getTotalCount() < config.warmUpSamples() || now - first < warmUpNanos) {
      return false;
    }
    warm = true;
    return true;
  }

  /** Whether an attempt starting at {@code now} gets a learnt timeout below the upper bound. */
  public boolean tightened(long now) {
    return learntNanos(now) < maxNanos;
  }

  /** The timeout for an attempt starting at {@code now} under {@code deadline}: never more than the time it leaves. */
  public long timeoutNanos(@Nullable Deadline deadline, long now) {
    long timeout = learntNanos(now);
    if (deadline != null) {
      timeout = Math.min(timeout, deadline.remainingNanos());
    }
    return Math.max(MIN_NANOS, timeout);
  }

  private long compute(ConcurrentHistogram histogram) {
    double micros = config.sigmas() > 0
        ? histogram.getMean() + config.sigmas() * histogram.getStdDeviation()
        : histogram.getValueAtPercentile(config.percentile());
    double nanos = micros * NANOS_PER_MICRO + bufferNanos;   // time-arithmetic: a double, clamped to maxNanos below
    return nanos >= maxNanos ? maxNanos : Math.max(minNanos, (long) nanos);
  }
}
