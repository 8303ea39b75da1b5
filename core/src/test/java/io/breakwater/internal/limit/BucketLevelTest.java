package io.breakwater.internal.limit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/**
 * One bucket as the lock-free path of the in-memory rate limit sees it ({@link BucketLevel}'s javadoc is the
 * contract): the level at an instant is the level at {@code origin} plus the refill law since, up to the cap; a take
 * succeeds only when the level less the reserve holds it; the reserve fades by half every five minutes.
 */
class BucketLevelTest {

  private static final long S = 1_000_000_000L;
  /** One permit a second, in permits per nanosecond. */
  private static final double ONE_PER_SECOND = 1.0 / S;

  private static BucketLevel level(double level, long origin, double cap, double rate) {
    return new BucketLevel(level, origin, cap, rate, 0, origin, 0, origin);
  }

  @Test
  void aTakeSucceedsWhileTheLevelLessTheReserveHoldsItAndNotOnePermitMore() {
    BucketLevel bucket = new BucketLevel(10, 0, 10, 0, 0, 0, 4, 0);
    assertThat(bucket.take(6, 0)).as("exactly the 6 above the reserve of 4").isEqualTo(BucketLevel.DONE);
    assertThat(bucket.take(0, 0)).as("taking nothing only checks the level is not below the reserve")
        .isEqualTo(BucketLevel.DONE);
    assertThat(bucket.take(1, 0)).as("the reserve is not taken").isEqualTo(BucketLevel.SHORT);
    assertThat(bucket.retire(0)).as("the refused take changed nothing").isEqualTo(4.0);
  }

  @Test
  void theReserveFadesByHalfEveryFiveMinutesFromWhenItWasSet() {
    long setAt = 100 * S;
    long oneHalfLifeLater = setAt + RateBuckets.RESERVE_HALF_LIFE_SECONDS * S;
    BucketLevel bucket = new BucketLevel(10, 0, 10, 0, 0, 0, 4, setAt);
    assertThat(bucket.reserve(setAt)).isEqualTo(4.0);
    assertThat(bucket.reserve(oneHalfLifeLater)).isCloseTo(2.0, within(1e-9));
    assertThat(bucket.take(7.9, oneHalfLifeLater)).as("10 held, 2 of them in reserve").isEqualTo(BucketLevel.DONE);
    assertThat(new BucketLevel(10, 0, 10, 0, 0, 0, 4, setAt).take(8.1, oneHalfLifeLater))
        .isEqualTo(BucketLevel.SHORT);
    assertThat(new BucketLevel(10, 0, 10, 0, 0, 0, 0, setAt).reserve(oneHalfLifeLater)).isZero();
  }

  @Test
  void aPacedBucketRefillsAtThePaceUntilTheResetInstantThenAtItsRate() {
    assertThat(paced().retire(15 * S)).isCloseTo(0.5, within(1e-9));
    assertThat(paced().retire(20 * S)).isCloseTo(1.0, within(1e-9));
    assertThat(paced().retire(25 * S)).as("1 by the reset, then 5 at the full rate").isCloseTo(6.0, within(1e-9));
    assertThat(paced().retire(5 * S)).as("a clock that went back refills and takes nothing").isZero();
  }

  /** Empty at 10 s; a tenth of a permit a second until the reset at 20 s, then one a second. */
  private static BucketLevel paced() {
    return new BucketLevel(0, 10 * S, 100, ONE_PER_SECOND, ONE_PER_SECOND / 10, 20 * S, 0, 10 * S);
  }

  @Test
  void aFullBucketDropsWhatOverflowedItsCapBeforeATake() {
    BucketLevel bucket = level(10, 0, 10, ONE_PER_SECOND);
    assertThat(bucket.take(5, 30 * S)).isEqualTo(BucketLevel.DONE);
    assertThat(bucket.retire(30 * S)).as("the 30 s of refill above the cap are gone").isCloseTo(5.0, within(1e-9));
  }

  @Test
  void aBucketThatRefilledBelowItsCapKeepsTheRefillAcrossATake() {
    BucketLevel bucket = level(2, 10 * S, 10, ONE_PER_SECOND);
    assertThat(bucket.take(3, 13 * S)).as("2 + 3 refilled").isEqualTo(BucketLevel.DONE);
    assertThat(bucket.take(4.5, 15 * S)).as("2 + 3 - 3 + 2 refilled since").isEqualTo(BucketLevel.SHORT);
    assertThat(bucket.retire(15 * S)).isCloseTo(4.0, within(1e-9));
  }

  @Test
  void givingBackNeverFillsABucketPastItsCapAndARetiredLevelRefusesEveryChange() {
    BucketLevel bucket = level(8, 0, 10, ONE_PER_SECOND);
    assertThat(bucket.add(5, S)).isEqualTo(BucketLevel.DONE);
    assertThat(bucket.take(10, S)).isEqualTo(BucketLevel.DONE);
    assertThat(bucket.take(0.5, S)).as("the cap, not 8 + 1 + 5").isEqualTo(BucketLevel.SHORT);
    assertThat(bucket.retire(S)).isCloseTo(0.0, within(1e-9));
    assertThat(bucket.take(0, S)).isEqualTo(BucketLevel.RETIRED);
    assertThat(bucket.add(1, S)).isEqualTo(BucketLevel.RETIRED);
  }
}
