package io.breakwater.internal.limit;

import static io.breakwater.internal.limit.ResetValues.INVALID;
import static io.breakwater.internal.limit.ResetValues.MAX_LENGTH;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The boundaries of the provider's header values ({@link ResetValues}' javadoc, docs/limits.md "The provider's
 * headers"): at most 64 characters, saturating arithmetic that is exact up to {@link Long#MAX_VALUE}, fractions read
 * to the nanosecond.
 */
class ResetValuesTest {

  private static final long S = 1_000_000_000L;

  /** {@code digits} left-padded with zeros to {@code length} characters. */
  private static String padded(String digits, int length) {
    return "0".repeat(length - digits.length()) + digits;
  }

  @Test
  void aValueOfSixtyFourCharactersIsReadAndOneCharacterMoreIsIgnored() {
    assertThat(ResetValues.count(padded("7", MAX_LENGTH))).isEqualTo(7);
    assertThat(ResetValues.count(padded("7", MAX_LENGTH + 1))).isEqualTo(INVALID);
    assertThat(ResetValues.count("")).isEqualTo(INVALID);
    assertThat(ResetValues.resetNanos(padded("7", MAX_LENGTH), 0)).isEqualTo(7 * S);
    assertThat(ResetValues.resetNanos(padded("7", MAX_LENGTH + 1), 0)).isEqualTo(INVALID);
    assertThat(ResetValues.retryAfterNanos(padded("7", MAX_LENGTH), 0)).isEqualTo(7 * S);
    assertThat(ResetValues.retryAfterNanos(padded("7", MAX_LENGTH + 1), 0)).isEqualTo(INVALID);
    assertThat(ResetValues.retryAfterMillisNanos(padded("7", MAX_LENGTH))).isEqualTo(7_000_000L);
    assertThat(ResetValues.retryAfterMillisNanos(padded("7", MAX_LENGTH + 1))).isEqualTo(INVALID);
  }

  @Test
  void numbersJustBelowTheLargestLongAreReadExactlyAndLargerOnesSaturate() {
    assertThat(ResetValues.count("9223372036854775806")).isEqualTo(Long.MAX_VALUE - 1);
    assertThat(ResetValues.count("9223372036854775808")).isEqualTo(Long.MAX_VALUE);
    assertThat(ResetValues.resetNanos("9223372036854775806ns", 0)).isEqualTo(Long.MAX_VALUE - 1);
    assertThat(ResetValues.resetNanos("9223372036", 0)).as("the most whole seconds a long holds in nanoseconds")
        .isEqualTo(9_223_372_036L * S);
    assertThat(ResetValues.resetNanos("9223372037", 0)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void aFractionIsReadToTwelveDigitsAndTheRestIsDropped() {
    // 0.999999999999 h = 3 599 999 999 996.4 ns; a thirteenth digit would make it 3 599 999 999 999.64
    assertThat(ResetValues.resetNanos("0.9999999999999h", 0)).isEqualTo(3_599_999_999_996L);
    assertThat(ResetValues.resetNanos("1.5", 0)).isEqualTo(1_500_000_000L);
  }

  @Test
  void aDotWithoutDigitsIsNoNumber() {
    assertThat(ResetValues.resetNanos(".", 0)).isEqualTo(INVALID);
    assertThat(ResetValues.resetNanos(".s", 0)).isEqualTo(INVALID);
    assertThat(ResetValues.retryAfterMillisNanos(".")).isEqualTo(INVALID);
  }

  @Test
  void everyDigitAfterAUnitStartsTheNextNumberOfAGoDuration() {
    assertThat(ResetValues.resetNanos("1m9s", 0)).isEqualTo(69 * S);
    assertThat(ResetValues.resetNanos("1m0s", 0)).isEqualTo(60 * S);
    assertThat(ResetValues.resetNanos("1h2m3.5s", 0)).isEqualTo(3_723_500_000_000L);
  }
}
