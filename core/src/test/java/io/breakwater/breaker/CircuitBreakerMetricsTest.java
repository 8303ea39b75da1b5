package io.breakwater.breaker;

import static io.breakwater.Breakwater.guardedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.HttpStatusException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

class CircuitBreakerMetricsTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private double calls(String outcome) {
    var search = registry.get("breakwater.breaker.calls").tags("breaker", "search", "outcome", outcome);
    return outcome.equals("success") ? search.functionCounter().count() : search.counter().count();
  }

  private double state(String state) {
    return registry.get("breakwater.breaker.state").tags("breaker", "search", "state", state).gauge().value();
  }

  private double transitions(String from, String to) {
    return registry.get("breakwater.breaker.transitions").tags("breaker", "search", "from", from, "to", to)
        .counter().count();
  }

  @Test
  void countsOutcomesTransitionsAndShowsTheState() {
    CircuitBreaker b = Calls.on(clock, "search").meterRegistry(registry).minimumCalls(2).build();
    assertThat(state("closed")).isEqualTo(1.0);

    Calls.succeed(b);
    Calls.call(b, new HttpStatusException(404));
    Mono.never().transformDeferred(guardedBy(b)).subscribe().dispose();
    Calls.fail(b); // 1 failure of 2 calls: opens
    Calls.fail(b); // rejected

    assertThat(calls("success")).isEqualTo(1.0);
    assertThat(calls("ignored")).isEqualTo(1.0);
    assertThat(calls("cancelled")).isEqualTo(1.0);
    assertThat(calls("failure")).isEqualTo(1.0);
    assertThat(calls("rejected")).isEqualTo(1.0);
    assertThat(state("open")).isEqualTo(1.0);
    assertThat(state("closed")).isEqualTo(0.0);
    assertThat(transitions("closed", "open")).isEqualTo(1.0);

    clock.advanceTimeBy(b.openDuration());
    Calls.succeed(b);
    assertThat(transitions("open", "half_open")).isEqualTo(1.0);
    assertThat(transitions("half_open", "closed")).isEqualTo(1.0);
    assertThat(state("closed")).isEqualTo(1.0);
  }

  /**
   * Issue 19, problem 5: a second registry with the same breaker names on the same MeterRegistry got Micrometer's
   * "Gauge has been already registered", and the gauge stayed bound to the first registry's breaker.
   */
  @Test
  void theStateGaugeAndSuccessCountFollowTheBreakerBuiltLastOnAMeterRegistry() {
    java.util.function.Supplier<CircuitBreakerRegistry> registryOfBreakers = () -> CircuitBreakerRegistry.builder()
        .breakers(name -> Calls.on(clock, name).meterRegistry(registry).minimumCalls(2).build())
        .build();
    CircuitBreakerRegistry first = registryOfBreakers.get();
    Calls.succeed(first.breaker("search"));
    CircuitBreakerRegistry second = registryOfBreakers.get();   // e.g. a restarted application context
    CircuitBreaker live = second.breaker("search");

    Calls.failTimes(live, 2);
    assertThat(live.state()).isEqualTo(CircuitBreaker.State.OPEN);
    assertThat(state("open")).isEqualTo(1.0);
    assertThat(state("closed")).isEqualTo(0.0);
    assertThat(registry.find("breakwater.breaker.state").tags("breaker", "search").gauges()).hasSize(3);

    Calls.succeed(second.breaker("search"));   // rejected
    clock.advanceTimeBy(live.openDuration());
    Calls.succeed(live);
    assertThat(calls("success")).as("the live breaker's successes").isEqualTo(1.0);
    assertThat(calls("failure")).as("failures of both breakers of that name").isEqualTo(2.0);
  }
}
