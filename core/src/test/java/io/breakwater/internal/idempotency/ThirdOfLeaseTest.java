package io.breakwater.internal.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ThirdOfLeaseTest {

  @Test
  void aThirdOfALeaseIsWhatDurationDividedByGivesToTheNanosecond() {
    for (Duration lease : new Duration[] {Duration.ofNanos(1), Duration.ofNanos(2), Duration.ofMillis(1),
        Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(30), Duration.ofSeconds(1, 999_999_999),
        Duration.ofSeconds(2, 999_999_999), Duration.ofDays(3650), Duration.ofSeconds(Long.MAX_VALUE, 999_999_999)}) {
      assertThat(IdempotentOperator.thirdOf(lease)).as("a third of %s", lease).isEqualTo(lease.dividedBy(3));
    }
  }
}
