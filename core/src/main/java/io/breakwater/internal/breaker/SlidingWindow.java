package io.breakwater.internal.breaker;

import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * A time-based sliding window of {@code size} buckets of {@code bucketNanos} each, lock-free.
 *
 * <p>Successes, the hot outcome, are not counted per bucket: the breaker's cumulative success counter (which is also
 * its metric) is incremented once, and each bucket remembers that counter's value when it began. The successes in
 * the window are the counter now minus its value when the oldest bucket still in the window began. Failures and
 * slow calls, which are rare, have striped counters per bucket. Recording a call is one comparison to find the
 * latest bucket and one striped increment; a bucket is replaced (one allocation) when time moves past it.
 *
 * <p>A call recorded at the very moment its bucket is replaced may be lost; the window is a rate estimate, and the
 * loss is bounded by the calls of one such race per bucket period.
 */
final class SlidingWindow {

  static final class Bucket {
    final long epoch;
    /** When the bucket starts, in nanoseconds. */
    final long start;
    /** The cumulative success count when the bucket began. */
    final long successesBefore;
    final LongAdder failures = new LongAdder();
    final LongAdder slow = new LongAdder();

    Bucket(long epoch, long bucketNanos, long successesBefore) {
      this.epoch = epoch;
      this.start = epoch == Long.MIN_VALUE ? Long.MIN_VALUE : epoch * bucketNanos;
      this.successesBefore = successesBefore;
    }
  }

  /** Calls, failures and slow calls in the window at some instant. */
  record Totals(long calls, long failures, long slow) {}

  private final long bucketNanos;
  private final int size;
  private final LongAdder successes;
  private final AtomicReferenceArray<Bucket> buckets;
  /** The latest bucket: most calls land in it, found with two comparisons instead of two divisions. */
  private volatile Bucket latest;
  /**
   * Calls that did not find their bucket in {@link #latest} and looked it up in the ring (a roll, a late call, or a
   * call into a bucket another thread has rolled). Read by tests only, to check that the two-comparison fast path
   * serves the calls it should: the mutation run found no other observable for it. A plain field, incremented on
   * the slow path alone, so it adds nothing to the hot path; racing increments may lose counts.
   */
  private long slowLookups;

  /** A window counting from now; {@code successes} is the breaker's cumulative success counter. */
  SlidingWindow(long bucketNanos, int size, LongAdder successes) {
    this.bucketNanos = bucketNanos;
    this.size = size;
    this.successes = successes;
    this.buckets = new AtomicReferenceArray<>(size);
    Bucket empty = new Bucket(Long.MIN_VALUE, bucketNanos, successes.sum());
    for (int i = 0; i < size; i++) {
      buckets.set(i, empty);
    }
    this.latest = empty;
  }

  /** The bucket for a call recorded at {@code now}. */
  Bucket bucket(long now) {
    Bucket last = latest;
    long into = now - last.start;
    if (into >= 0 && into < bucketNanos) {
      return last;
    }
    slowLookups++;
    long epoch = Math.floorDiv(now, bucketNanos);
    int index = (int) Math.floorMod(epoch, (long) size);
    Bucket b = buckets.get(index);
    if (b.epoch != epoch) {
      b = roll(index, b, epoch);
    }
    if (b.epoch > last.epoch) {
      latest = b;
    }
    return b;
  }

  /** How many calls have looked their bucket up in the ring instead of finding it in the latest; for tests. */
  long slowLookups() {
    return slowLookups;
  }

  private Bucket roll(int index, Bucket b, long epoch) {
    for (;;) {
      if (b.epoch > epoch) {
        return b; // a late call: a newer bucket holds the slot, count it there
      }
      Bucket fresh = new Bucket(epoch, bucketNanos, successes.sum());
      if (buckets.compareAndSet(index, b, fresh)) {
        return fresh;
      }
      b = buckets.get(index);
      if (b.epoch == epoch) {
        return b;
      }
    }
  }

  /** The totals over the buckets that {@code now} still covers. */
  Totals totals(long now) {
    long epoch = Math.floorDiv(now, bucketNanos);
    long oldest = epoch - size + 1;
    long failures = 0;
    long slow = 0;
    Bucket first = null;
    for (int i = 0; i < size; i++) {
      Bucket b = buckets.get(i);
      if (b.epoch >= oldest && b.epoch <= epoch) {
        failures += b.failures.sum();
        slow += b.slow.sum();
        if (first == null || b.epoch < first.epoch) {
          first = b;
        }
      }
    }
    long successesInWindow = first == null ? 0 : Math.max(0, successes.sum() - first.successesBefore);
    return new Totals(successesInWindow + failures, failures, slow);
  }
}
