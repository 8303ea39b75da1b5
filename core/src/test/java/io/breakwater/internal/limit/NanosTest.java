package io.breakwater.internal.limit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link Nanos}: durations and sums of nanoseconds saturate at the bounds of a long instead of wrapping. */
class NanosTest {

  @Test
  void durationsTooLongForALongSaturateAndTheLongestThatFitIsExact() {
    long seconds = Long.MAX_VALUE / 1_000_000_000L - 2;
    assertThat(Nanos.of(Duration.ofSeconds(seconds))).isEqualTo(seconds * 1_000_000_000L);
    assertThat(Nanos.of(Duration.ofSeconds(seconds + 1))).isEqualTo(Long.MAX_VALUE);
    assertThat(Nanos.of(Duration.ofDays(1_000_000_000L))).isEqualTo(Long.MAX_VALUE);
    assertThat(Nanos.of(Duration.ofSeconds(-seconds))).isEqualTo(-seconds * 1_000_000_000L);
    assertThat(Nanos.of(Duration.ofSeconds(-seconds - 1))).isEqualTo(Long.MIN_VALUE);
    assertThat(Nanos.of(Duration.ofMillis(-1))).as("negative stays negative").isEqualTo(-1_000_000L);
  }

  @Test
  void sumsSaturateAtTheBoundsInsteadOfWrapping() {
    assertThat(Nanos.add(5, -3)).isEqualTo(2);
    assertThat(Nanos.add(-5, 3)).isEqualTo(-2);
    assertThat(Nanos.add(Long.MAX_VALUE, 1)).isEqualTo(Long.MAX_VALUE);
    assertThat(Nanos.add(Long.MAX_VALUE - 1, 1)).isEqualTo(Long.MAX_VALUE);
    assertThat(Nanos.add(Long.MIN_VALUE, -1)).isEqualTo(Long.MIN_VALUE);
    assertThat(Nanos.add(Long.MAX_VALUE, Long.MIN_VALUE)).isEqualTo(-1);
  }
}
