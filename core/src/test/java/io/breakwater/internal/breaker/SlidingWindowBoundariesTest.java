package io.breakwater.internal.breaker;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * The edges of {@link SlidingWindow} that the mutation run (docs/reliability.md, "Mutation testing") found untested:
 * a call exactly at a bucket's start, the oldest bucket still in the window, a late call, and a clock below zero.
 * Ten buckets of one second each.
 */
class SlidingWindowBoundariesTest {

  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  private final SlidingWindow window = new SlidingWindow(SECOND, 10, new LongAdder());

  private void failAt(long nanos) {
    window.bucket(nanos).failures.increment();
  }

  @Test
  void aCallExactlyAtABucketsStartIsCountedInThatBucketNotThePreviousOne() {
    failAt(0);
    failAt(SECOND);
    assertThat(window.totals(10 * SECOND).failures()).as("bucket 0 has left the window, bucket 1 has not")
        .isEqualTo(1);
  }

  @Test
  void theOldestBucketStillInTheWindowIsCounted() {
    failAt(SECOND / 2);
    assertThat(window.totals(9 * SECOND + SECOND / 2).failures()).isEqualTo(1);
    assertThat(window.totals(10 * SECOND).failures()).isZero();
  }

  @Test
  void aLateCallIsCountedInItsOwnBucketNotInTheLatestOne() {
    failAt(5 * SECOND + SECOND / 2);
    failAt(SECOND / 2);
    assertThat(window.totals(10 * SECOND + SECOND / 2).failures()).as("only the call of bucket 5 is still in")
        .isEqualTo(1);
  }

  @Test
  void aClockBelowZeroFindsItsBucketsLikeAnyOther() {
    failAt(-3 * SECOND + SECOND / 2);
    failAt(3 * SECOND + SECOND / 2);
    assertThat(window.totals(3 * SECOND + SECOND / 2).failures()).isEqualTo(2);
    assertThat(window.totals(7 * SECOND + SECOND / 2).failures()).as("bucket -3 has left, bucket 3 has not")
        .isEqualTo(1);
  }
}
