package io.breakwater.breaker;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.breaker.Calls.failTimes;
import static io.breakwater.breaker.Calls.succeed;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker.State;
import io.breakwater.failure.HttpStatusException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
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
  void aCallHeldBackDuringTheRampSaysRampingUpAndIsCountedApartFromOpenRejections() {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    CircuitBreaker b = Calls.on(clock, "search").minimumCalls(2).rampUp(Duration.ofSeconds(10), 0.1)
        .meterRegistry(meters).build();
    failTimes(b, 2);
    assertThat(succeed(b)).as("open").isInstanceOfSatisfying(CircuitBreakerOpenException.class,
        open -> assertThat(open.rampingUp()).isFalse());
    clock.advanceTimeBy(b.openDuration());
    assertThat(succeed(b)).as("probe").isNull();
    List<CircuitBreakerOpenException> heldBack = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 10; i++) {
      if (succeed(b) instanceof CircuitBreakerOpenException e) {
        heldBack.add(e);
      }
    }
    assertThat(heldBack).hasSize(9).allSatisfy(e -> {
      assertThat(e.rampingUp()).isTrue();
      assertThat(e.state()).isEqualTo(State.CLOSED);
      assertThat(e).hasMessage("Circuit breaker 'search' is ramping up after recovery (state CLOSED): it admits "
          + "10 % of calls for now, growing to all of them, and held this one back; the breaker is not open, a call "
          + "a moment later may pass");
    });
    assertThat(meters.get("breakwater.breaker.calls").tags("breaker", "search", "outcome", "rejected").counter()
        .count()).isEqualTo(1);
    assertThat(meters.get("breakwater.breaker.calls").tags("breaker", "search", "outcome", "rejected_ramping_up")
        .counter().count()).isEqualTo(9);
  }

  @Test
  void rejectionsDuringTheRampAreNotFailures() {
    CircuitBreaker b = recovered();
    admittedOf(b, 1000);
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }

  /**
   * A breaker that opens amid dense synchronous successes (cache hits) and recovers by a synchronous probe still ramps
   * up from the probe's time. Failed before: the probe's success took the clock value last sampled by those hits,
   * from before the breaker opened (synchronous calls sample the clock while dense), so the breaker closed "30 s ago"
   * (HALF_OPEN->CLOSED dated before OPEN->HALF_OPEN), its ramp-up was over at once and all 1 000 calls were admitted.
   */
  @Test
  void aSynchronousProbeAfterDenseSynchronousTrafficStillRampsUpFromItsOwnTime() {
    CircuitBreaker b = Calls.on(clock, "search").minimumCalls(2).rampUp(Duration.ofSeconds(10), 0.1).build();
    List<StateTransition> transitions = new CopyOnWriteArrayList<>();
    b.transitions().subscribe(transitions::add);
    clock.advanceTimeBy(Duration.ofSeconds(1));
    for (int i = 0; i < 100; i++) {
      succeed(b);
    }
    for (int i = 0; i < 200 && b.state() == State.CLOSED; i++) {
      Calls.fail(b);   // dense failures, at the same instant
    }
    assertThat(b.state()).isEqualTo(State.OPEN);
    clock.advanceTimeBy(b.openDuration());
    assertThat(succeed(b)).as("probe").isNull();

    assertThat(transitions).extracting(t -> t.from() + "->" + t.to() + "@" + t.at().getEpochSecond())
        .containsExactly("CLOSED->OPEN@1", "OPEN->HALF_OPEN@31", "HALF_OPEN->CLOSED@31");
    assertThat(admittedOf(b, 1000)).as("at 0 s of the ramp: 10 %").isBetween(99, 101);
  }

  /** The same for a family probed through a tool whose dense synchronous successes sampled the clock. */
  @Test
  void aFamilyProbedSynchronouslyThroughABusyToolStillRampsUpFromTheProbesTime() {
    CircuitBreakerRegistry registry = CircuitBreakerRegistry.builder()
        .breakers(name -> Calls.on(clock, name).minimumCalls(2).rampUp(Duration.ofSeconds(10), 0.1).build())
        .build();
    CircuitBreaker family = registry.familyBreaker("gmail");
    clock.advanceTimeBy(Duration.ofSeconds(1));
    for (int i = 0; i < 100; i++) {
      Mono.just("hit").transformDeferred(guardedBy(registry, "gmail.send")).subscribe();
    }
    clock.advanceTimeBy(Duration.ofMinutes(2));   // past the window: gmail.list's two failures open the family
    for (int i = 0; i < 200 && family.state() == State.CLOSED; i++) {
      Mono.error(new HttpStatusException(503)).transformDeferred(guardedBy(registry, "gmail.list"))
          .subscribe(v -> { }, e -> { });
    }
    assertThat(family.state()).isEqualTo(State.OPEN);
    clock.advanceTimeBy(family.openDuration());
    assertThat(Mono.just("probe").transformDeferred(guardedBy(registry, "gmail.send")).block()).isEqualTo("probe");
    assertThat(family.state()).isEqualTo(State.CLOSED);

    int admitted = 0;
    for (int i = 0; i < 1000; i++) {
      AtomicReference<Object> got = new AtomicReference<>();
      Mono.just("hit").transformDeferred(guardedBy(registry, "gmail.send")).subscribe(got::set, got::set);
      admitted += "hit".equals(got.get()) ? 1 : 0;
    }
    assertThat(admitted).as("the family admits a tenth at the start of its ramp").isBetween(99, 101);
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
