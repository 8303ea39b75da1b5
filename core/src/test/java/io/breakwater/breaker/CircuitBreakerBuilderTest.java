package io.breakwater.breaker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class CircuitBreakerBuilderTest {

  @Test
  void defaultsAreDocumented() {
    CircuitBreaker b = CircuitBreaker.ofDefaults("search");
    assertThat(b.name()).isEqualTo("search");
    assertThat(b.failureRateThreshold()).isEqualTo(0.5);
    assertThat(b.minimumCalls()).isEqualTo(20);
    assertThat(b.slidingWindow()).isEqualTo(Duration.ofSeconds(60));
    assertThat(b.windowBuckets()).isEqualTo(10);
    assertThat(b.openDuration()).isEqualTo(Duration.ofSeconds(30));
    assertThat(b.openDurationMultiplier()).isEqualTo(1.0);
    assertThat(b.halfOpenProbes()).isEqualTo(1);
    assertThat(b.rampUp()).isEqualTo(Duration.ofSeconds(10));
    assertThat(b.rampUpStartFraction()).isEqualTo(0.1);
    assertThat(b.slowCallThreshold()).isEqualTo(Duration.ofSeconds(30));
    assertThat(b.slowCallRateThreshold()).isEqualTo(0.8);
    assertThat(b.countsRateLimited()).isFalse();
    assertThat(b.countsUnknown()).isTrue();
    assertThat(b.state()).isEqualTo(CircuitBreaker.State.CLOSED);
  }

  @Test
  void toBuilderCopiesSettingsUnderANewName() {
    CircuitBreaker b = CircuitBreaker.builder("a").minimumCalls(7).halfOpenProbes(2).build();
    CircuitBreaker copy = b.toBuilder("b").build();
    assertThat(copy.name()).isEqualTo("b");
    assertThat(copy.minimumCalls()).isEqualTo(7);
    assertThat(copy.halfOpenProbes()).isEqualTo(2);
  }

  @Test
  void badSettingsAreRejectedWithWhatToChange() {
    assertThatThrownBy(() -> CircuitBreaker.builder(" ").build())
        .hasMessageContaining("name is blank");
    assertThatThrownBy(() -> CircuitBreaker.builder("x").failureRateThreshold(50).build())
        .hasMessage("failureRateThreshold of 'x' is 50.0: give a fraction above 0 and at most 1 (0.5 means 50 %)");
    assertThatThrownBy(() -> CircuitBreaker.builder("x").minimumCalls(0).build())
        .hasMessage("minimumCalls of 'x' is 0: give at least 1");
    assertThatThrownBy(() -> CircuitBreaker.builder("x").halfOpenProbes(0).build())
        .hasMessage("halfOpenProbes of 'x' is 0: give at least 1");
    assertThatThrownBy(() -> CircuitBreaker.builder("x").openDuration(Duration.ZERO).build())
        .hasMessage("openDuration of 'x' is PT0S: give a positive duration");
    assertThatThrownBy(() -> CircuitBreaker.builder("x").slidingWindow(Duration.ofMillis(5), 10).build())
        .hasMessage("slidingWindow of 'x' is PT0.005S in 10 buckets: make each bucket at least 1 ms");
    assertThatThrownBy(() -> CircuitBreaker.builder("x").slidingWindow(Duration.ofSeconds(5), 0).build())
        .hasMessage("slidingWindow buckets of 'x' is 0: give 1 to 1000");
    assertThatThrownBy(() -> CircuitBreaker.builder("x").openDurationGrowth(0.5, Duration.ofMinutes(1)).build())
        .hasMessage("openDurationGrowth multiplier of 'x' is 0.5: give 1 (no growth) or more");
    assertThatThrownBy(() -> CircuitBreaker.builder("x").openDurationGrowth(2, Duration.ofSeconds(1)).build())
        .hasMessage("maxOpenDuration of 'x' (PT1S) is shorter than openDuration (PT30S): raise it or lower "
            + "openDuration");
    assertThatThrownBy(() -> CircuitBreaker.builder("x").rampUp(Duration.ofSeconds(-1)).build())
        .hasMessage("rampUp of 'x' is PT-1S: give a positive duration, or Duration.ZERO to turn ramp-up off");
    assertThatThrownBy(() -> CircuitBreaker.builder("x").rampUp(Duration.ofSeconds(1), 0).build())
        .hasMessage("rampUp startFraction of 'x' is 0.0: give a fraction above 0 and at most 1 (0.5 means 50 %)");
    assertThatThrownBy(() -> CircuitBreaker.builder("x").slowCall(Duration.ofSeconds(1), 2).build())
        .hasMessage("slowCall rateThreshold of 'x' is 2.0: give a fraction above 0 and at most 1 (0.5 means 50 %)");
  }
}
