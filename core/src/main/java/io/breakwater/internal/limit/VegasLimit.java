package io.breakwater.internal.limit;

import io.breakwater.failure.FailureKind;

/**
 * The controller of an adaptive concurrency limit, after TCP Vegas and Netflix's {@code VegasLimit}, with the
 * no-load latency measured as Envoy's adaptive concurrency filter does.
 *
 * <ul>
 *   <li>Samples are gathered in windows of at least {@value #MIN_WINDOW} calls and at least the limit's worth.</li>
 *   <li>At the end of a window the calls queued at the dependency are estimated as
 *       {@code limit × (1 − rttNoLoad / rttAverage)}. Fewer than {@code max(1, 5 % of the limit)}: the limit rises by
 *       {@code max(1, log10(limit))}, if the window used at least half of it. More than {@code max(2, 15 %)}: it falls
 *       by as much. A window with a drop (a timeout, 5xx, connection failure or 429) cuts it by 10 % instead.</li>
 *   <li>{@code rttNoLoad} is the lowest latency seen. Every {@value #PROBE_INTERVAL_SECONDS} s the limit is pinned
 *       to {@value #PROBE_LIMIT} until {@value #PROBE_SAMPLES} calls started under the pin have ended; the lowest of
 *       their latencies becomes the new {@code rttNoLoad}, and the limit returns to where it was. Without this a
 *       dependency that got slower for good would look like a queue forever, and the limit would sink to its
 *       minimum.</li>
 * </ul>
 *
 * <p>A dependency whose latency stays flat up to a knee and then grows with the calls in flight settles between
 * 5 % and 18 % above the knee (where 5–15 % of the limit queue). Thread-safe: samples are taken under this object's
 * monitor, a few arithmetic operations each.
 */
final class VegasLimit {

  static final int MIN_WINDOW = 10;
  static final long PROBE_INTERVAL_SECONDS = 60;
  static final int PROBE_LIMIT = 3;
  static final int PROBE_SAMPLES = 20;
  private static final long PROBE_INTERVAL_NANOS = PROBE_INTERVAL_SECONDS * 1_000_000_000L;

  private final int min;
  private final int max;
  private double limit;
  /** The lowest latency seen without load; negative until the first window. */
  private long noLoad = -1;

  private int count;
  private int drops;
  private int maxInFlight;
  private double sum;
  private long windowMin = Long.MAX_VALUE;

  private boolean started;
  private long nextProbe;
  private boolean probing;
  private long probeStart;
  private int probeCount;
  private long probeMin;
  private double saved;

  VegasLimit(AdaptiveSettings settings) {
    this.min = settings.min();
    this.max = settings.max();
    this.limit = settings.initial();
  }

  static boolean isDrop(FailureKind kind) {
    return kind == FailureKind.TIMEOUT || kind == FailureKind.SERVER_ERROR || kind == FailureKind.CONNECTION
        || kind == FailureKind.RATE_LIMITED;
  }

  /**
   * Records a call that started at {@code start} and answered at {@code end} (nanoseconds on the limit's clock), with
   * {@code inFlight} calls in flight when it ended. Returns the new limit if it changed, else -1.
   */
  synchronized int sample(long start, long end, boolean drop, int inFlight) {
    long rtt = Math.max(0, end - start);
    if (!started) {
      started = true;
      nextProbe = end + PROBE_INTERVAL_NANOS;
    }
    if (probing) {
      if (start >= probeStart) {
        probeCount++;
        probeMin = Math.min(probeMin, rtt);
        if (probeCount >= PROBE_SAMPLES) {
          probing = false;
          noLoad = probeMin;
          limit = saved;
          nextProbe = end + PROBE_INTERVAL_NANOS;
          resetWindow();
          return current();
        }
      }
      return -1;
    }
    count++;
    sum += rtt;
    windowMin = Math.min(windowMin, rtt);
    maxInFlight = Math.max(maxInFlight, inFlight);
    if (drop) {
      drops++;
    }
    if (count < Math.max(MIN_WINDOW, (int) limit)) {
      return -1;
    }
    int before = current();
    endWindow();
    if (end - nextProbe >= 0) {
      int pinned = Math.max(min, Math.min(PROBE_LIMIT, before));
      if (current() > pinned) {
        saved = limit;
        probing = true;
        probeStart = end;
        probeCount = 0;
        probeMin = Long.MAX_VALUE;
        return pinned;
      }
      nextProbe = end + PROBE_INTERVAL_NANOS;
    }
    int after = current();
    return after != before ? after : -1;
  }

  private void endWindow() {
    double average = sum / count;
    if (noLoad < 0 || windowMin < noLoad) {
      noLoad = windowMin;
    }
    if (drops > 0) {
      limit = limit * 0.9;
    } else {
      double queue = average <= 0 ? 0 : limit * (1 - noLoad / average);
      double alpha = Math.max(1, 0.05 * limit);
      double beta = Math.max(2, 0.15 * limit);
      double step = Math.max(1, Math.log10(limit));
      if (queue < alpha) {
        if (maxInFlight * 2 >= limit) {
          limit += step;
        }
      } else if (queue > beta) {
        limit -= step;
      }
    }
    limit = Math.max(min, Math.min(max, limit));
    resetWindow();
  }

  private void resetWindow() {
    count = 0;
    drops = 0;
    maxInFlight = 0;
    sum = 0;
    windowMin = Long.MAX_VALUE;
  }

  private int current() {
    return (int) limit;
  }
}
