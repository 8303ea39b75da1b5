package io.breakwater.breaker;

import static io.breakwater.breaker.Calls.failTimes;
import static io.breakwater.breaker.Calls.on;
import static io.breakwater.breaker.Calls.succeed;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker.State;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Durations a configuration may hold that do not fit in a long of nanoseconds (292 years), or that do but overflow
 * once added to a clock far from zero (Reactor's default clock counts nanoseconds since 1970, about 1.8 × 10¹⁸):
 * they saturate, as everywhere else, and never wrap round into the past.
 */
class BreakerHostileDurationsTest {

  private static final Duration BEYOND_NANOS = Duration.ofSeconds(Long.MAX_VALUE);
  /** Fits in a long of nanoseconds (about 7.9 × 10¹⁸), but not once added to today's epoch nanoseconds. */
  private static final Duration TWO_HUNDRED_FIFTY_YEARS = Duration.ofDays(250 * 365);

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

  @AfterEach
  void stop() {
    clock.dispose();
  }

  @Test
  void durationsBeyondWhatNanosecondsHoldAreAcceptedAndAnOpenBreakerStaysOpen() {
    clock.advanceTimeBy(Duration.ofDays(56 * 365));   // where Reactor's default clock stands today
    CircuitBreaker b = on(clock, "search").minimumCalls(2).failureRateThreshold(0.5)
        .slidingWindow(BEYOND_NANOS).openDuration(BEYOND_NANOS).openDurationGrowth(2.0, BEYOND_NANOS)
        .slowCall(BEYOND_NANOS, 0.5).build();
    failTimes(b, 2);
    assertThat(b.state()).isEqualTo(State.OPEN);
    clock.advanceTimeBy(Duration.ofDays(100 * 365));
    assertThat(b.state()).isEqualTo(State.OPEN);
  }

  @Test
  void aLongOpenDurationOnAClockFarFromZeroDoesNotWrapRoundAndHalfOpenAtOnce() {
    clock.advanceTimeBy(Duration.ofDays(56 * 365));   // where Reactor's default clock stands today
    CircuitBreaker b = on(clock, "search").minimumCalls(2).failureRateThreshold(0.5)
        .openDuration(TWO_HUNDRED_FIFTY_YEARS).openDurationGrowth(2.0, TWO_HUNDRED_FIFTY_YEARS).build();
    failTimes(b, 2);
    clock.advanceTimeBy(Duration.ofDays(1));
    assertThat(b.state()).as("open for 250 years, not half-open because the end wrapped into the past")
        .isEqualTo(State.OPEN);
  }

  @Test
  void aLongRampUpOnAClockFarFromZeroStillAdmitsTheFirstShareOfCalls() {
    clock.advanceTimeBy(Duration.ofDays(56 * 365));
    CircuitBreaker b = on(clock, "search").minimumCalls(2).failureRateThreshold(0.5)
        .openDuration(Duration.ofSeconds(30)).rampUp(TWO_HUNDRED_FIFTY_YEARS).build();
    failTimes(b, 2);
    clock.advanceTimeBy(Duration.ofSeconds(30));
    succeed(b);
    assertThat(b.state()).as("the probe closed it; ramping up for 250 years").isEqualTo(State.CLOSED);
    clock.advanceTimeBy(Duration.ofDays(1));
    succeed(b);
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }
}
