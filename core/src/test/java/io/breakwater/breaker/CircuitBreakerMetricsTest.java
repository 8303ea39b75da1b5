package io.breakwater.breaker;

import static io.breakwater.Breakwater.guardedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.HttpStatusException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
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

  /** docs/breaker.md: the transitions counter is tagged by both ends, so a failed probe's reopening is its own pair. */
  @Test
  void countsEachTransitionUnderItsOwnFromAndToPair() {
    CircuitBreaker b = Calls.on(clock, "search").meterRegistry(registry).minimumCalls(2).build();
    Calls.failTimes(b, 2);   // closed -> open
    clock.advanceTimeBy(b.openDuration());
    Calls.fail(b);   // open -> half_open, the probe fails: half_open -> open
    clock.advanceTimeBy(b.openDuration());
    Calls.succeed(b);   // open -> half_open, the probe succeeds: half_open -> closed

    assertThat(transitions("closed", "open")).isEqualTo(1.0);
    assertThat(transitions("open", "half_open")).isEqualTo(2.0);
    assertThat(transitions("half_open", "open")).isEqualTo(1.0);
    assertThat(transitions("half_open", "closed")).isEqualTo(1.0);
    assertThat(registry.find("breakwater.breaker.transitions").tags("breaker", "search").counters()).hasSize(4);
  }

  private double slowCalls() {
    return registry.get("breakwater.breaker.slow.calls").tags("breaker", "search").counter().count();
  }

  /** A call answered after {@code delay} on the clock, with {@code error} or a value. */
  private Mono<Object> after(Duration delay, @Nullable Throwable error) {
    Mono<Long> answer = Mono.delay(delay, clock);
    return error == null ? answer.map(v -> (Object) v) : answer.then(Mono.error(error));
  }

  private void run(CircuitBreaker b, Mono<Object> call, Duration delay) {
    call.transformDeferred(guardedBy(b)).subscribe(v -> { }, e -> { });
    clock.advanceTimeBy(delay);
  }

  @Test
  void countsSlowCallsWhetherTheySucceedOrFailAndEveryOutcomeOfAProbe() {
    CircuitBreaker b = Calls.on(clock, "search").meterRegistry(registry).minimumCalls(10)
        .slowCall(Duration.ofSeconds(1), 1.0).halfOpenProbes(1).build();
    run(b, after(Duration.ofSeconds(2), null), Duration.ofSeconds(2));
    run(b, after(Duration.ofSeconds(2), new HttpStatusException(503)), Duration.ofSeconds(2));
    run(b, after(Duration.ofMillis(10), null), Duration.ofMillis(10));
    assertThat(slowCalls()).as("slow calls while closed").isEqualTo(2.0);
    assertThat(calls("success")).isEqualTo(2.0);
    assertThat(calls("failure")).isEqualTo(1.0);

    Calls.failTimes(b, 10);   // opens
    assertThat(state("open")).isEqualTo(1.0);
    double failures = calls("failure");

    clock.advanceTimeBy(b.openDuration());
    Calls.call(b, new HttpStatusException(404));   // a probe that ends without a verdict: ignored, next caller probes
    assertThat(calls("ignored")).isEqualTo(1.0);
    Calls.fail(b);   // a probe that fails: reopens
    assertThat(calls("failure")).isEqualTo(failures + 1);
    assertThat(state("open")).isEqualTo(1.0);

    clock.advanceTimeBy(Duration.ofHours(1));
    run(b, after(Duration.ofSeconds(2), null), Duration.ofSeconds(2));   // a slow probe: reopens
    assertThat(slowCalls()).as("slow calls, with the slow probe").isEqualTo(3.0);
    assertThat(state("open")).isEqualTo(1.0);
  }

  @Test
  void aCallCancelledWhoseSourceThenFailsCountsAsCancelledAndItsErrorIsDropped() {
    CircuitBreaker b = Calls.on(clock, "search").meterRegistry(registry).build();
    IllegalStateException late = new IllegalStateException("failed on cancel");
    StepVerifier.create(Flux.<String>from(s -> s.onSubscribe(new Subscription() {
              @Override
              public void request(long n) {
              }

              @Override
              public void cancel() {
                s.onError(late);
              }
            }))
            .transformDeferred(guardedBy(b)))
        .expectSubscription()
        .thenCancel()
        .verifyThenAssertThat(Duration.ofSeconds(5))
        .hasDroppedErrors(1)
        .hasDroppedErrorsSatisfying(errors -> assertThat(errors).containsExactly(late));
    assertThat(calls("cancelled")).isEqualTo(1.0);
    assertThat(calls("failure")).isZero();
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
