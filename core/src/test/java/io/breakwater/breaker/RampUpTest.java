package io.breakwater.breaker;

import static io.breakwater.breaker.Calls.failTimes;
import static io.breakwater.breaker.Calls.succeed;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker.State;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

class RampUpTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

  private CircuitBreaker recovered() {
    CircuitBreaker b = Calls.on(clock, "search").minimumCalls(2).rampUp(Duration.ofSeconds(10), 0.1).build();
    failTimes(b, 2);
    clock.advanceTimeBy(b.openDuration());
    assertThat(succeed(b)).as("probe").isNull();
    assertThat(b.state()).isEqualTo(State.CLOSED);
    return b;
  }

  private static int admittedOf(CircuitBreaker b, int calls) {
    int admitted = 0;
    for (int i = 0; i < calls; i++) {
      Throwable e = succeed(b);
      if (e == null) {
        admitted++;
      } else {
        assertThat(e).isInstanceOfSatisfying(CircuitBreakerOpenException.class,
            r -> assertThat(r.state()).isEqualTo(State.CLOSED));
      }
    }
    return admitted;
  }

  @Test
  void admittedFractionRisesLinearlyOverTheRampPeriod() {
    CircuitBreaker b = recovered();
    assertThat(admittedOf(b, 1000)).as("at 0 s: 10 %").isBetween(99, 101);
    clock.advanceTimeBy(Duration.ofSeconds(5));
    assertThat(admittedOf(b, 1000)).as("at 5 s: 55 %").isBetween(549, 551);
    clock.advanceTimeBy(Duration.ofMillis(4900));
    assertThat(admittedOf(b, 1000)).as("at 9.9 s: 99.1 %").isBetween(990, 992);
    clock.advanceTimeBy(Duration.ofMillis(100));
    assertThat(admittedOf(b, 1000)).as("from 10 s: all").isEqualTo(1000);
  }

  @Test
  void rejectionsDuringTheRampAreNotFailures() {
    CircuitBreaker b = recovered();
    admittedOf(b, 1000);
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void noRampUpClosesStraightToFullTraffic() {
    CircuitBreaker b = Calls.on(clock, "search").minimumCalls(2).rampUp(Duration.ZERO).build();
    failTimes(b, 2);
    clock.advanceTimeBy(b.openDuration());
    succeed(b);
    assertThat(admittedOf(b, 100)).isEqualTo(100);
  }
}
