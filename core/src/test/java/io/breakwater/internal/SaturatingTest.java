package io.breakwater.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link Saturating}: exact wherever the result fits in a long, the bound it passed wherever it does not. */
class SaturatingTest {

  private static final long MAX = Long.MAX_VALUE;
  private static final long MIN = Long.MIN_VALUE;

  @Test
  void addIsExactWhereverTheSumFits() {
    assertThat(Saturating.add(0, 5)).isEqualTo(5);
    assertThat(Saturating.add(5, 0)).isEqualTo(5);
    assertThat(Saturating.add(-3, 2)).isEqualTo(-1);
    assertThat(Saturating.add(MAX, MIN)).isEqualTo(-1);
    assertThat(Saturating.add(MAX - 1, 1)).isEqualTo(MAX);
    assertThat(Saturating.add(MIN + 1, -1)).isEqualTo(MIN);
  }

  @Test
  void addStopsAtTheBoundItOverflowedPast() {
    assertThat(Saturating.add(MAX, 1)).isEqualTo(MAX);
    assertThat(Saturating.add(MAX, MAX)).isEqualTo(MAX);
    assertThat(Saturating.add(MIN, -1)).isEqualTo(MIN);
    assertThat(Saturating.add(MIN, MIN)).isEqualTo(MIN);
  }

  @Test
  void multiplyIsExactWhereverTheProductFits() {
    assertThat(Saturating.multiply(0, MAX)).isZero();
    assertThat(Saturating.multiply(MIN, 0)).isZero();
    assertThat(Saturating.multiply(-3, 4)).isEqualTo(-12);
    assertThat(Saturating.multiply(-3, -4)).isEqualTo(12);
    assertThat(Saturating.multiply(MIN, 1)).isEqualTo(MIN);
    assertThat(Saturating.multiply(-1, MAX)).isEqualTo(-MAX);
    assertThat(Saturating.multiply(9_223_372_036L, 1_000_000_000L)).isEqualTo(9_223_372_036_000_000_000L);
  }

  @Test
  void multiplyStopsAtTheBoundOfTheExactProductsSign() {
    assertThat(Saturating.multiply(MAX, 2)).isEqualTo(MAX);
    assertThat(Saturating.multiply(MIN, -1)).isEqualTo(MAX);
    assertThat(Saturating.multiply(MIN, MIN)).isEqualTo(MAX);
    // MIN × 2 = -2^64: its low 64 bits are 0 and its high ones -1, which must not pass for a product that fits
    assertThat(Saturating.multiply(MIN, 2)).isEqualTo(MIN);
    assertThat(Saturating.multiply(-2, MAX)).isEqualTo(MIN);
    assertThat(Saturating.multiply(3_000_000_000L, -4_000_000_000L)).isEqualTo(MIN);
  }

  @Test
  void nanosIsExactUpToTheLastWholeSecondBelowTheBounds() {
    assertThat(Saturating.nanos(Duration.ofMillis(1_500))).isEqualTo(1_500_000_000L);
    assertThat(Saturating.nanos(Duration.ofNanos(-1))).isEqualTo(-1);
    assertThat(Saturating.nanos(Duration.ofSeconds(9_223_372_035L, 999_999_999))).isEqualTo(9_223_372_035_999_999_999L);
    assertThat(Saturating.nanos(Duration.ofSeconds(-9_223_372_035L))).isEqualTo(-9_223_372_035_000_000_000L);
  }

  @Test
  void nanosSaturatesFromTheSecondInWhichALongOfNanosecondsEnds() {
    // 9_223_372_036.9 s would wrap round past Long.MAX_VALUE ns: the whole second saturates
    assertThat(Saturating.nanos(Duration.ofSeconds(9_223_372_036L, 999_999_999))).isEqualTo(MAX);
    assertThat(Saturating.nanos(Duration.ofSeconds(9_223_372_036L))).isEqualTo(MAX);
    assertThat(Saturating.nanos(Duration.ofSeconds(Long.MAX_VALUE, 999_999_999))).isEqualTo(MAX);
    assertThat(Saturating.nanos(Duration.ofSeconds(-9_223_372_036L))).isEqualTo(MIN);
    assertThat(Saturating.nanos(Duration.ofSeconds(Long.MIN_VALUE))).isEqualTo(MIN);
  }

  @Test
  void millisCountsAsToMillisDoesWhereverThatFits() {
    for (Duration d : List.of(Duration.ZERO, Duration.ofNanos(1), Duration.ofNanos(-1), Duration.ofNanos(999_999),
        Duration.ofNanos(-1_000_001), Duration.ofMillis(1_500), Duration.ofMillis(-1_500),
        Duration.ofSeconds(-3, 1), Duration.ofSeconds(9_223_372_036_854_774L, 999_999_999),
        Duration.ofSeconds(-9_223_372_036_854_774L, 1))) {
      assertThat(Saturating.millis(d)).as("%s", d).isEqualTo(d.toMillis());
    }
  }

  @Test
  void millisSaturatesWhereToMillisWouldThrow() {
    assertThat(Saturating.millis(Duration.ofSeconds(Long.MAX_VALUE))).isEqualTo(MAX);
    assertThat(Saturating.millis(Duration.ofSeconds(9_223_372_036_854_776L))).isEqualTo(MAX);
    assertThat(Saturating.millis(Duration.ofSeconds(Long.MIN_VALUE))).isEqualTo(MIN);
    assertThat(Saturating.millis(Duration.ofSeconds(-9_223_372_036_854_776L))).isEqualTo(MIN);
  }
}
