package io.breakwater.internal.breaker;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * How {@link SlidingWindow} finds a call's bucket: the latest bucket by two comparisons, any other by a lookup in
 * the ring that rolls the slot when time has moved past it; and what happens when two calls roll the same slot at
 * once. Ten buckets of one second each.
 *
 * <p>The race is ordered without threads: the window reads the breaker's success counter between reading a slot and
 * replacing it (a new bucket remembers the count), so a counter that records a second call at that read is a second
 * thread that rolls the slot at that very moment.
 */
class SlidingWindowRollTest {

  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  /** The breaker's success counter; runs the next call it is given when the window next reads it, once. */
  @SuppressWarnings("serial") // never serialised
  private static final class CounterThatLetsACallIn extends LongAdder {
    private Runnable atNextRead = () -> {};

    @Override
    public long sum() {
      Runnable call = atNextRead;
      atNextRead = () -> {};
      call.run();
      return super.sum();
    }
  }

  private final CounterThatLetsACallIn successes = new CounterThatLetsACallIn();
  private final SlidingWindow window = new SlidingWindow(SECOND, 10, successes);

  private void failAt(long nanos) {
    window.bucket(nanos).failures.increment();
  }

  @Test
  void callsInTheLatestBucketAreFoundWithoutALookupInTheRing() {
    failAt(SECOND / 2);
    assertThat(window.slowLookups()).as("the first call rolls bucket 0").isEqualTo(1);
    failAt(SECOND / 2 + 1);
    failAt(SECOND - 1);
    assertThat(window.slowLookups()).as("bucket 0 is now the latest").isEqualTo(1);
    assertThat(window.totals(SECOND - 1).failures()).isEqualTo(3);
  }

  @Test
  void aCallAtTheLatestBucketsVeryStartIsFoundWithoutALookup() {
    failAt(SECOND + SECOND / 2);
    failAt(SECOND);
    assertThat(window.slowLookups()).isEqualTo(1);
    assertThat(window.totals(SECOND + SECOND / 2).failures()).isEqualTo(2);
  }

  @Test
  void aCallInTheNextBucketRollsItAndMakesItTheLatest() {
    failAt(SECOND / 2);
    failAt(SECOND + SECOND / 2);
    failAt(SECOND + SECOND / 2 + 1);
    failAt(2 * SECOND - 1);
    assertThat(window.slowLookups()).as("one lookup per bucket rolled").isEqualTo(2);
    assertThat(window.totals(2 * SECOND - 1).failures()).isEqualTo(4);
  }

  @Test
  void twoCallsThatRollTheSameBucketAtOnceAreBothCountedInIt() {
    successes.atNextRead = () -> failAt(SECOND / 2); // the other call wins the roll of slot 0 to bucket 0
    failAt(SECOND / 2 + 1);
    assertThat(window.totals(SECOND - 1).failures()).as("the loser counts its call in the winner's bucket")
        .isEqualTo(2);
    assertThat(window.totals(10 * SECOND).failures()).as("both left the window with bucket 0").isZero();
  }

  @Test
  void aCallThatLosesTheRollToANewerBucketIsCountedInTheNewerOne() {
    successes.atNextRead = () -> failAt(10 * SECOND + SECOND / 2); // rolls slot 0 to bucket 10 first
    failAt(SECOND / 2);
    assertThat(window.totals(10 * SECOND + SECOND / 2).failures()).as("the late call is counted in bucket 10")
        .isEqualTo(2);
  }

  @Test
  void theSuccessesInTheWindowAreThoseSinceItsOldestBucketBegan() {
    successes.add(7);
    failAt(SECOND / 2);
    successes.add(3);
    assertThat(window.totals(SECOND - 1)).isEqualTo(new SlidingWindow.Totals(4, 1, 0));
  }
}
