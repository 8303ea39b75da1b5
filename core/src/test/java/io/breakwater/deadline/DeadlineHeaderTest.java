package io.breakwater.deadline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DeadlineHeaderTest {

  @Test
  void formatsInTheFinestUnitThatFitsEightDigits() {
    assertThat(DeadlineHeader.format(Duration.ofNanos(99_999_999))).isEqualTo("99999999n");
    assertThat(DeadlineHeader.format(Duration.ofMillis(250))).isEqualTo("250000u");
    assertThat(DeadlineHeader.format(Duration.ofSeconds(10))).isEqualTo("10000000u");
    assertThat(DeadlineHeader.format(Duration.ofSeconds(200))).isEqualTo("200000m");
    assertThat(DeadlineHeader.format(Duration.ofDays(2))).isEqualTo("172800S");
    assertThat(DeadlineHeader.format(Duration.ofDays(20_000))).isEqualTo("28800000M");
    assertThat(DeadlineHeader.format(Duration.ofSeconds(Long.MAX_VALUE / 1_000_000_000L))).endsWith("H");
    assertThat(DeadlineHeader.format(Duration.ofSeconds(-5))).isEqualTo("0n");
  }

  @Test
  void aDurationBeyond292YearsFormatsAsTheLongestHeaderAndTheMostNegativeAsExpired() {
    // toNanos() throws for both: ChronoUnit.FOREVER.getDuration() is a natural "no deadline" to pass on
    assertThat(DeadlineHeader.format(Duration.ofSeconds(Long.MAX_VALUE)))
        .isEqualTo(DeadlineHeader.format(Duration.ofNanos(Long.MAX_VALUE)));
    assertThat(DeadlineHeader.format(Duration.ofSeconds(Long.MIN_VALUE))).isEqualTo("0n");
  }

  @Test
  void roundsDownSoTheReceiverNeverGetsMoreTime() {
    Duration remaining = Duration.ofMillis(123_456_789).plusNanos(999_999);
    long sent = DeadlineHeader.parse(DeadlineHeader.format(remaining));

    assertThat(sent).isLessThanOrEqualTo(remaining.toNanos());
    assertThat(Duration.ofNanos(sent)).isEqualTo(Duration.ofSeconds(123_456));
  }

  @Test
  void parsesEveryUnit() {
    assertThat(DeadlineHeader.parse("2H")).isEqualTo(Duration.ofHours(2).toNanos());
    assertThat(DeadlineHeader.parse("3M")).isEqualTo(Duration.ofMinutes(3).toNanos());
    assertThat(DeadlineHeader.parse("4S")).isEqualTo(Duration.ofSeconds(4).toNanos());
    assertThat(DeadlineHeader.parse("5m")).isEqualTo(Duration.ofMillis(5).toNanos());
    assertThat(DeadlineHeader.parse("6u")).isEqualTo(6_000L);
    assertThat(DeadlineHeader.parse("7n")).isEqualTo(7L);
    assertThat(DeadlineHeader.parse("0n")).isZero();
  }

  @Test
  void rejectsMalformedValuesSayingWhatIsExpected() {
    for (String bad : new String[] {"", "5", "m", "123456789m", "-5m", "5x", "5 m", "1.5S"}) {
      assertThatIllegalArgumentException().as(bad).isThrownBy(() -> DeadlineHeader.parse(bad))
          .withMessageContaining("expected 1 to 8 digits and a unit (H, M, S, m, u or n)");
    }
  }

  @Test
  void aMalformedValueIsQuotedEscapedSoItCannotForgeALogLine() {
    assertThatIllegalArgumentException().isThrownBy(() -> DeadlineHeader.parse("5\nm"))
        .withMessageContaining("'5\\nm'").withMessageNotContaining("\n");
  }

  @Test
  void theServersMaximumIsPositiveAndSaturates() {
    assertThat(DeadlineHeader.standard().maximum()).isEqualTo(java.time.Duration.ofMinutes(5));
    assertThat(DeadlineHeader.standard().maximum(java.time.Duration.ofSeconds(Long.MAX_VALUE)).maximum())
        .isEqualTo(java.time.Duration.ofNanos(Long.MAX_VALUE));
    assertThatIllegalArgumentException().isThrownBy(() -> DeadlineHeader.standard().maximum(java.time.Duration.ZERO))
        .withMessageContaining("give a positive duration");
  }
}
