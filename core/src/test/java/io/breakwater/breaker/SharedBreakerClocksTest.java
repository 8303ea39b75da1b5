package io.breakwater.breaker;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.breaker.Calls.counting;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker.State;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Issue 26: four instances of one shared breaker, each on its own clock with its own origin, as hosts with different
 * uptimes are (a monotonic clock has no common origin across hosts). A transition published by one instance used to
 * be applied at the sender's clock reading: instances behind it stayed open for days, instances ahead half-opened at
 * once, and after a remote close the ramp admitted a negative fraction.
 */
class SharedBreakerClocksTest {

  static final Duration OPEN = Duration.ofSeconds(30);

  /** A 10 days in, B 1 hour in, C 20 days in, D at zero. */
  final List<VirtualTimeScheduler> clocks = List.of(clock(Duration.ofDays(10)), clock(Duration.ofHours(1)),
      clock(Duration.ofDays(20)), clock(Duration.ZERO));
  final BreakerStateStore shared = BreakerStateStore.inMemory();
  final List<CircuitBreaker> instances = new ArrayList<>();

  SharedBreakerClocksTest() {
    for (VirtualTimeScheduler clock : clocks) {
      instances.add(Calls.on(clock, "search").minimumCalls(2).openDuration(OPEN)
          .rampUp(Duration.ofSeconds(10), 0.1).stateStore(shared).build());
    }
  }

  static VirtualTimeScheduler clock(Duration origin) {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    clock.advanceTimeBy(origin);
    return clock;
  }

  void advanceAll(Duration by) {
    clocks.forEach(c -> c.advanceTimeBy(by));
  }

  @Test
  void theOpenDurationIsHonouredOnEveryInstanceWhateverItsClock() {
    Calls.failTimes(instances.get(0), 2);
    assertThat(instances).extracting(CircuitBreaker::state).containsOnly(State.OPEN);

    advanceAll(OPEN.minusSeconds(1));
    assertThat(instances).as("29 s after the trip, on every clock").extracting(CircuitBreaker::state)
        .containsOnly(State.OPEN);
    advanceAll(Duration.ofSeconds(1));
    assertThat(instances).as("30 s after the trip, on every clock").extracting(CircuitBreaker::state)
        .containsOnly(State.HALF_OPEN);
  }

  @Test
  void oneProbeClusterWideThenTheRampAdmitsItsFractionOnEveryInstance() {
    Calls.failTimes(instances.get(1), 2);
    advanceAll(OPEN);

    AtomicInteger upstream = new AtomicInteger();
    Sinks.One<String> probeAnswer = Sinks.one();
    int rejected = 0;
    for (int i = 0; i < 100; i++) {
      CircuitBreaker instance = instances.get(i % 4);
      Mono<String> call = i == 0 ? probeAnswer.asMono() : Mono.just("x");
      AtomicInteger failed = new AtomicInteger();
      counting(upstream, call).transformDeferred(guardedBy(instance)).subscribe(v -> { }, e -> failed.set(1));
      rejected += failed.get();
    }
    assertThat(upstream).as("probe calls across the four instances").hasValue(1);
    assertThat(rejected).isEqualTo(99);

    probeAnswer.tryEmitValue("ok");
    assertThat(instances).extracting(CircuitBreaker::state).containsOnly(State.CLOSED);

    // halfway through the 10 s ramp from 10 %: 55 % of calls, on each instance's own clock
    advanceAll(Duration.ofSeconds(5));
    for (CircuitBreaker instance : instances) {
      int admitted = 0;
      for (int i = 0; i < 100; i++) {
        admitted += Calls.succeed(instance) == null ? 1 : 0;
      }
      assertThat(admitted).as("admitted of 100 by %s", instance).isEqualTo(55);
    }
    advanceAll(Duration.ofSeconds(5));
    assertThat(instances).allSatisfy(instance -> assertThat(Calls.succeed(instance)).isNull());
  }

  @Test
  void aRemoteTransitionIsSeenAtTheReceiversTime() {
    List<StateTransition> seenByB = new ArrayList<>();
    instances.get(1).transitions().subscribe(seenByB::add);
    Calls.failTimes(instances.get(0), 2);
    assertThat(seenByB).singleElement().satisfies(t -> {
      assertThat(t.to()).isEqualTo(State.OPEN);
      assertThat(Duration.between(java.time.Instant.EPOCH, t.at())).isEqualTo(Duration.ofHours(1));
    });
  }
}
