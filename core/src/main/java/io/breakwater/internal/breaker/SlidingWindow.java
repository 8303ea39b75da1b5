package io.breakwater.internal.breaker;

import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * A time-based sliding window of {@code size} buckets of {@code bucketNanos} each, lock-free. Recording a call is
 * one array read and one striped increment; a bucket is replaced (one allocation) when time moves past it. The
 * totals are summed only when a failure or a slow call asks whether the breaker should open.
 *
 * <p>A call recorded at the very moment its bucket is replaced may be lost; the window is a rate estimate, and the
 * loss is bounded by the calls of one such race per bucket period.
 */
final class SlidingWindow {

  static final class Bucket {
    final long epoch;
    /** When the bucket starts, in nanoseconds. */
    final long start;
    final LongAdder successes = new LongAdder();
    final LongAdder failures = new LongAdder();
    final LongAdder slow = new LongAdder();

    Bucket(long epoch, long bucketNanos) {
      this.epoch = epoch;
      this.start = epoch == Long.MIN_VALUE ? Long.MIN_VALUE : epoch * bucketNanos;
    }
  }

  /** Calls, failures and slow calls in the window at some instant. */
  record Totals(long calls, long failures, long slow) {}

  private final long bucketNanos;
  private final int size;
  private final AtomicReferenceArray<Bucket> buckets;
  /** The latest bucket: most calls land in it, found with two comparisons instead of two divisions. */
  private volatile Bucket latest;

  SlidingWindow(long bucketNanos, int size) {
    this.bucketNanos = bucketNanos;
    this.size = size;
    this.buckets = new AtomicReferenceArray<>(size);
    Bucket empty = new Bucket(Long.MIN_VALUE, bucketNanos);
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

  private Bucket roll(int index, Bucket b, long epoch) {
    for (;;) {
      if (b.epoch > epoch) {
        return b; // a late call: a newer bucket holds the slot, count it there
      }
      Bucket fresh = new Bucket(epoch, bucketNanos);
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
    long successes = 0;
    long failures = 0;
    long slow = 0;
    for (int i = 0; i < size; i++) {
      Bucket b = buckets.get(i);
      if (b.epoch >= oldest && b.epoch <= epoch) {
        successes += b.successes.sum();
        failures += b.failures.sum();
        slow += b.slow.sum();
      }
    }
    return new Totals(successes + failures, failures, slow);
  }
}
