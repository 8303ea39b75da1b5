package io.breakwater.internal.hedge;

import io.breakwater.internal.Saturating;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import org.HdrHistogram.AtomicHistogram;
import org.HdrHistogram.Histogram;

/**
 * A percentile of the latencies of a dependency's recent answers, for adaptive hedge delays: two HdrHistograms of
 * {@link #HALF} samples each, recorded into in turn, so that the percentile covers the last {@code HALF} to
 * {@code 2 × HALF} answers. Recording is wait-free ({@link AtomicHistogram}, fixed range, two significant digits:
 * about 25 KiB a histogram); the percentile is recomputed by one thread at a time every {@link #REFRESH_EVERY}
 * samples (every sample while warming up), so reading it is a volatile read.
 */
final class LatencyWindow {

  static final int HALF = 1000;
  static final int REFRESH_EVERY = 16;
  /** Latencies are kept in microseconds from 1 µs to 1 h; longer ones count as 1 h. */
  private static final long MAX_MICROS = 3_600_000_000L;
  private static final int DIGITS = 2;

  private final double percentile;
  private final int warmUp;
  private final AtomicHistogram[] halves = {
      new AtomicHistogram(MAX_MICROS, DIGITS), new AtomicHistogram(MAX_MICROS, DIGITS)};
  /** Written only by the refreshing thread. */
  private final Histogram merged = new Histogram(MAX_MICROS, DIGITS);
  private volatile int current;
  /** Count at the last refresh; read racily to decide whether to refresh. */
  private volatile long refreshedAt;
  private volatile long delayNanos = -1;

  private volatile long count;
  private static final AtomicLongFieldUpdater<LatencyWindow> COUNT =
      AtomicLongFieldUpdater.newUpdater(LatencyWindow.class, "count");

  // read and written only through REFRESHING, which Error Prone's UnusedVariable does not follow
  @SuppressWarnings("UnusedVariable")
  private volatile int refreshing;
  private static final AtomicIntegerFieldUpdater<LatencyWindow> REFRESHING =
      AtomicIntegerFieldUpdater.newUpdater(LatencyWindow.class, "refreshing");

  LatencyWindow(double percentile, int warmUp) {
    this.percentile = percentile;
    this.warmUp = warmUp;
  }

  /** Records the latency of one answer. */
  void record(long nanos) {
    long micros = Math.max(1L, Math.min(MAX_MICROS, nanos / 1_000L));
    halves[current].recordValue(micros);
    long n = COUNT.incrementAndGet(this);
    if (n - refreshedAt >= (n <= 2L * warmUp ? 1 : REFRESH_EVERY)) {
      refresh(n);
    }
  }

  /** The percentile of recent latencies, in nanoseconds; -1 until {@code warmUp} answers are known. */
  long delayNanos() {
    return delayNanos;
  }

  /** The answers recorded so far. */
  long samples() {
    return count;
  }

  private void refresh(long n) {
    if (!REFRESHING.compareAndSet(this, 0, 1)) {
      return;
    }
    try {
      int now = current;
      if (halves[now].getTotalCount() >= HALF) {
        int next = 1 - now;
        halves[next].reset();
        current = next;
      }
      merged.reset();
      merged.add(halves[0]);
      merged.add(halves[1]);
      if (merged.getTotalCount() >= warmUp) {
        delayNanos = Saturating.multiply(merged.getValueAtPercentile(percentile), 1_000L);
      }
      refreshedAt = n;
    } finally {
      refreshing = 0;
    }
  }
}
