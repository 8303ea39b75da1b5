package io.breakwater.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link Durations#format}: the short durations of the library's error messages, at each unit's edges. */
class DurationsTest {

  @Test
  void eachUnitIsUsedFromItsFirstWholeValueOn() {
    assertThat(Durations.format(Duration.ZERO)).isEqualTo("0ns");
    assertThat(Durations.format(Duration.ofNanos(999))).isEqualTo("999ns");
    assertThat(Durations.format(Duration.ofNanos(1_000))).isEqualTo("1µs");
    assertThat(Durations.format(Duration.ofNanos(999_999))).isEqualTo("999.999µs");
    assertThat(Durations.format(Duration.ofMillis(1))).isEqualTo("1ms");
    assertThat(Durations.format(Duration.ofNanos(999_999_000))).isEqualTo("999.999ms");
    assertThat(Durations.format(Duration.ofSeconds(1))).isEqualTo("1s");
    assertThat(Durations.format(Duration.ofSeconds(59))).isEqualTo("59s");
    assertThat(Durations.format(Duration.ofSeconds(60))).isEqualTo("1m");
    assertThat(Durations.format(Duration.ofSeconds(3599))).isEqualTo("59m59s");
    assertThat(Durations.format(Duration.ofHours(1))).isEqualTo("1h");
  }

  @Test
  void fractionsKeepAtMostThreeDecimalsAndNoTrailingZeros() {
    assertThat(Durations.format(Duration.ofNanos(1_500))).isEqualTo("1.5µs");
    assertThat(Durations.format(Duration.ofNanos(1_234_567))).isEqualTo("1.235ms");
    assertThat(Durations.format(Duration.ofMillis(250))).isEqualTo("250ms");
    assertThat(Durations.format(Duration.ofMillis(1_250))).isEqualTo("1.25s");
    assertThat(Durations.format(Duration.ofMillis(59_500))).isEqualTo("59.5s");
  }

  @Test
  void minutesShowTheirSecondsAndHoursTheirMinutesUnlessZero() {
    assertThat(Durations.format(Duration.ofSeconds(90))).isEqualTo("1m30s");
    assertThat(Durations.format(Duration.ofSeconds(61))).isEqualTo("1m1s");
    assertThat(Durations.format(Duration.ofSeconds(120))).isEqualTo("2m");
    assertThat(Durations.format(Duration.ofMinutes(90))).isEqualTo("1h30m");
    assertThat(Durations.format(Duration.ofMinutes(61).plusSeconds(59))).isEqualTo("1h1m");
    assertThat(Durations.format(Duration.ofHours(49))).isEqualTo("49h");
  }

  @Test
  void aNegativeDurationIsItsMagnitudeWithAMinus() {
    assertThat(Durations.format(Duration.ofMillis(-250))).isEqualTo("-250ms");
    assertThat(Durations.format(Duration.ofSeconds(-90))).isEqualTo("-1m30s");
    assertThat(Durations.format(Duration.ofNanos(-1))).isEqualTo("-1ns");
  }

  @Test
  void aDurationTooLongForALongOfNanosecondsStillFormatsInHours() {
    // 292 years and more: what a "wait forever" maxWait or a hostile Retry-After gives
    assertThat(Durations.format(Duration.ofDays(365L * 300))).isEqualTo("2628000h");
    assertThat(Durations.format(Duration.ofSeconds(Long.MAX_VALUE))).isEqualTo("2562047788015215h30m");
    assertThat(Durations.format(Duration.ofSeconds(-Long.MAX_VALUE))).isEqualTo("-2562047788015215h30m");
  }

  @Test
  void theMostNegativeDurationFormatsInsteadOfOverflowingItsNegation() {
    // Duration.ofSeconds(Long.MIN_VALUE).negated() throws: 2^63 seconds is one more than a Duration holds
    assertThat(Durations.format(Duration.ofSeconds(Long.MIN_VALUE))).isEqualTo("-2562047788015215h30m");
    assertThat(Durations.format(Duration.ofSeconds(Long.MIN_VALUE, 1))).isEqualTo("-2562047788015215h30m");
  }
}
