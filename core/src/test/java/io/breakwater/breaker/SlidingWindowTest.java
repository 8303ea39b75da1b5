package io.breakwater.breaker;

import static io.breakwater.breaker.Calls.failTimes;
import static io.breakwater.breaker.Calls.succeed;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker.State;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

class SlidingWindowTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

  private CircuitBreaker breaker() {
    return Calls.on(clock, "search").minimumCalls(4).failureRateThreshold(0.5)
        .slidingWindow(Duration.ofSeconds(10), 10).build();
  }

  @Test
  void failuresOlderThanTheWindowRollOut() {
    CircuitBreaker b = breaker();
    failTimes(b, 3);
    clock.advanceTimeBy(Duration.ofSeconds(10));
    failTimes(b, 1);
    assertThat(b.state()).as("only 1 call left in the window").isEqualTo(State.CLOSED);
    failTimes(b, 3);
    assertThat(b.state()).isEqualTo(State.OPEN);
  }

  @Test
  void failuresWithinTheWindowAddUpAcrossBuckets() {
    CircuitBreaker b = breaker();
    for (int i = 0; i < 4; i++) {
      failTimes(b, 1);
      clock.advanceTimeBy(Duration.ofMillis(2900));
    }
    assertThat(b.state()).as("4 failures within 8.7 s").isEqualTo(State.OPEN);
  }

  @Test
  void theWindowRollsBucketByBucket() {
    CircuitBreaker b = breaker();
    failTimes(b, 2);                           // bucket [0 s, 1 s)
    clock.advanceTimeBy(Duration.ofSeconds(5));
    succeed(b);                                // bucket [5 s, 6 s)
    clock.advanceTimeBy(Duration.ofSeconds(5)); // now 10 s: the first bucket just left the window
    failTimes(b, 1);
    assertThat(b.state()).as("window holds 1 success and 1 failure").isEqualTo(State.CLOSED);
    failTimes(b, 1);
    assertThat(b.state()).as("1 success and 2 failures of 3: below the minimum of 4").isEqualTo(State.CLOSED);
    failTimes(b, 1);
    assertThat(b.state()).as("1 success and 3 failures").isEqualTo(State.OPEN);
  }

  @Test
  void denseSynchronousSuccessesAfterALongPauseStillCount() {
    CircuitBreaker b = Calls.on(clock, "search").minimumCalls(20).failureRateThreshold(0.5)
        .slidingWindow(Duration.ofSeconds(60), 10).build();
    for (int i = 0; i < 5000; i++) {
      succeed(b); // dense: the breaker stops reading the clock for most of them
    }
    clock.advanceTimeBy(Duration.ofSeconds(70)); // everything above has left the window
    for (int i = 0; i < 3000; i++) {
      succeed(b);
    }
    failTimes(b, 100);
    assertThat(b.state()).as("100 failures against thousands of recent successes").isEqualTo(State.CLOSED);
    clock.advanceTimeBy(Duration.ofSeconds(70));
    failTimes(b, 20);
    assertThat(b.state()).as("only failures in the window").isEqualTo(State.OPEN);
  }
}
