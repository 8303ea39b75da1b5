package io.breakwater.internal.agent;

import io.breakwater.agent.CallTimeouts;
import io.breakwater.deadline.Deadline;
import org.HdrHistogram.ConcurrentHistogram;
import reactor.util.annotation.Nullable;

/**
 * The per-tool state of {@link CallTimeouts}: a histogram of successful attempts' durations (microseconds) and the
 * timeout it gives, recomputed every time the sample count grows by 1/64 (at least 1), so reading it is a volatile
 * read on the hot path. Thread-safe.
 */
public final class LatencyTimeouts {

  private static final long NANOS_PER_MICRO = 1_000L;
  private static final long MIN_NANOS = 1_000_000L;

  private final CallTimeouts config;
  @Nullable
  private final ConcurrentHistogram histogram;
  private volatile long learntNanos;
  private volatile long learntAtCount;

  public LatencyTimeouts(CallTimeouts config) {
    this.config = config;
    this.histogram = config.isAdaptive() ? new ConcurrentHistogram(3) : null;
    this.learntNanos = config.warmUp().toNanos();
  }

  /** Records the duration of a successful attempt. */
  public void record(long nanos) {
    if (histogram != null && nanos >= 0) {
      histogram.recordValue(Math.max(1L, nanos / NANOS_PER_MICRO));
    }
  }

  /** The number of latencies recorded. */
  public long samples() {
    return histogram == null ? 0 : histogram.getTotalCount();
  }

  /** The timeout the next attempt gets, before the deadline's clamps: learnt, warm-up or fixed. */
  public long learntNanos() {
    if (histogram == null) {
      return config.max().toNanos();
    }
    long count = histogram.getTotalCount();
    if (count < config.warmUpSamples()) {
      return config.warmUp().toNanos();
    }
    long last = learntAtCount;
    if (count - last >= Math.max(1L, last / 64)) {
      learntNanos = compute();
      learntAtCount = count;
    }
    return learntNanos;
  }

  /** The timeout for an attempt under {@code deadline}: learnt, and never more than the time it leaves. */
  public long timeoutNanos(@Nullable Deadline deadline) {
    long timeout = learntNanos();
    if (deadline != null) {
      timeout = Math.min(timeout, deadline.remainingNanos());
    }
    return Math.max(MIN_NANOS, timeout);
  }

  private long compute() {
    double micros = config.sigmas() > 0
        ? histogram.getMean() + config.sigmas() * histogram.getStdDeviation()
        : histogram.getValueAtPercentile(config.percentile());
    long nanos = (long) (micros * NANOS_PER_MICRO) + config.buffer().toNanos();
    return Math.max(config.min().toNanos(), Math.min(config.max().toNanos(), nanos));
  }
}
