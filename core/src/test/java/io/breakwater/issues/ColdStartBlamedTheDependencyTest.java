package io.breakwater.issues;

import static io.breakwater.Breakwater.guardedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreaker.State;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.breaker.SchedulerLag;
import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.testing.LateScheduler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Issue 19, problem 1: a cold start opened the breaker and served fallbacks for a minute. The adaptive timeout learnt
 * a 0.5 s floor from 20 fast warm-up calls, the client's own CPU then saturated, and the per-attempt timeouts counted
 * as the dependency's failures, so the family breaker opened while the dependency was healthy.
 */
class ColdStartBlamedTheDependencyTest {

  static final Duration VERIFY = Duration.ofSeconds(5);

  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  /** How long the dependency (as this process sees it) takes to answer now. */
  final AtomicLong latencyMillis = new AtomicLong(50);
  final AtomicInteger serverErrors = new AtomicInteger();

  Mono<String> mail(String id) {
    return Mono.defer(() -> serverErrors.get() > 0 && serverErrors.getAndDecrement() > 0
        ? Mono.error(new HttpStatusException(503))
        : Mono.just("mail " + id).delayElement(Duration.ofMillis(latencyMillis.get())));
  }

  CircuitBreakerRegistry breakers() {
    return CircuitBreakerRegistry.builder()
        .breakers(name -> CircuitBreaker.builder(name).minimumCalls(10).failureRateThreshold(0.5)
            .rampUp(Duration.ZERO).meterRegistry(meters).build())
        .build();
  }

  Tool<String, String> tool(String name, CallTimeouts timeouts, CircuitBreakerRegistry breakers) {
    return Tool.of(ToolDescriptor.builder(name).sideEffect(SideEffect.READ_ONLY).timeouts(timeouts)
            .retry(RetryPolicy.builder().name(name).maxRetries(0).meterRegistry(meters).build())
            .breakers(breakers).meterRegistry(meters).eventLog(e -> { }).build(),
        this::mail, String.class)
        .withFallbacks(Fallbacks.<String, String>builder().orDefault("no mail").build());
  }

  /** Twenty fast warm-up calls per tool, then the process saturates: every answer takes 2 s to be seen. */
  Flux<ToolOutcome<String>> coldStart(List<Tool<String, String>> tools) {
    return Flux.range(0, 20).concatMap(i -> Flux.fromIterable(tools).concatMap(t -> t.outcome("w" + i)))
        .thenMany(Flux.defer(() -> {
          latencyMillis.set(2_000);
          return Flux.range(0, 20).concatMap(i -> Flux.fromIterable(tools).concatMap(t -> t.outcome("s" + i)));
        }));
  }

  @Test
  void adaptiveTimeoutsStartAtTheUpperBoundSoTheColdStartOpensNoBreakerAndServesNoFallback() {
    CircuitBreakerRegistry breakers = breakers();
    List<Tool<String, String>> tools = List.of(tool("gmail.send", CallTimeouts.adaptiveDefaults(), breakers),
        tool("gmail.list", CallTimeouts.adaptiveDefaults(), breakers));
    StepVerifier.withVirtualTime(() -> coldStart(tools).filter(o -> !(o instanceof ToolOutcome.Success<String> s
            && !s.degraded())).count())
        .thenAwait(Duration.ofMinutes(5))
        .expectNext(0L)
        .expectComplete().verify(VERIFY);
    assertThat(tools).allSatisfy(t -> assertThat(t.currentTimeout()).as("still warming up: under a minute of calls")
        .isEqualTo(CallTimeouts.DEFAULT_MAX));
    assertThat(breakers.family("gmail.send").orElseThrow().state()).isEqualTo(State.CLOSED);
  }

  @Test
  void aFamilyBreakerDoesNotOpenOnOurOwnAdaptiveCutsAloneButStillOnServerErrors() {
    CircuitBreakerRegistry breakers = breakers();
    CallTimeouts learnsFast = CallTimeouts.adaptive().warmUp(20, Duration.ZERO).build();
    List<Tool<String, String>> tools = List.of(tool("gmail.send", learnsFast, breakers),
        tool("gmail.list", learnsFast, breakers));
    CircuitBreaker family = breakers.family("gmail.send").orElseThrow();
    Tool<String, String> labels = tool("gmail.labels", learnsFast, breakers);
    AtomicInteger familyOpenAfterColdStart = new AtomicInteger(-1);
    StepVerifier.withVirtualTime(() -> coldStart(tools).then(Mono.fromRunnable(() ->
            familyOpenAfterColdStart.set((int) opened("gmail"))))
            // two minutes later, a backend-wide outage: 503s from a tool whose own breaker is closed
            .then(Mono.delay(Duration.ofMinutes(2)))
            .then(Mono.fromRunnable(() -> serverErrors.set(20)))
            .thenMany(Flux.range(0, 20).concatMap(i -> labels.outcome("x" + i)))
            .then())
        .thenAwait(Duration.ofMinutes(5))
        .expectComplete().verify(VERIFY);
    // every slow attempt was cut at the learnt 500 ms: the tools' own breakers opened on them, the family did not
    assertThat(tools).allSatisfy(t -> assertThat(t.currentTimeout()).isEqualTo(Duration.ofMillis(500)));
    assertThat(opened("gmail.send")).isOne();
    assertThat(familyOpenAfterColdStart).hasValue(0);
    assertThat(meters.counter("breakwater.breaker.calls", "breaker", "gmail", "outcome", "adaptive_cut").count())
        .isGreaterThanOrEqualTo(10);
    // the outage still opened the family
    assertThat(opened("gmail")).isOne();
    assertThat(family.state()).isNotEqualTo(State.CLOSED);
  }

  @Test
  void aTimeoutWhileOurSchedulerIsStarvedIsLocalOverloadNotTheDependencysFailure() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    LateScheduler ours = new LateScheduler(clock);
    SchedulerLag lag = SchedulerLag.builder().scheduler(() -> ours).start();
    CircuitBreaker breaker = CircuitBreaker.builder("gmail").minimumCalls(5).scheduler(() -> clock)
        .schedulerLag(lag).meterRegistry(meters).build();
    clock.advanceTimeBy(Duration.ofSeconds(1));

    ours.lag(Duration.ofMillis(400));   // our timers now fire 400 ms late: the process is starved
    clock.advanceTimeBy(Duration.ofSeconds(1));
    for (int i = 0; i < 10; i++) {
      timeout(breaker);
    }
    assertThat(breaker.state()).as("10 timeouts while starved").isEqualTo(State.CLOSED);
    assertThat(meters.counter("breakwater.breaker.calls", "breaker", "gmail", "outcome", "local_overload").count())
        .isEqualTo(10);

    ours.lag(Duration.ZERO);   // recovered; after the hold, timeouts are the dependency's again
    clock.advanceTimeBy(SchedulerLag.DEFAULT_HOLD.plusSeconds(1));
    for (int i = 0; i < 5; i++) {
      timeout(breaker);
    }
    assertThat(breaker.state()).isEqualTo(State.OPEN);
    lag.dispose();
  }

  double opened(String breaker) {
    var opened = meters.find("breakwater.breaker.transitions").tags("breaker", breaker, "from", "closed", "to", "open")
        .counter();
    return opened == null ? 0 : opened.count();
  }

  static void timeout(CircuitBreaker breaker) {
    Mono.error(new CallTimeoutException("per-call", Duration.ofMillis(500), Duration.ofMillis(500)))
        .transformDeferred(guardedBy(breaker)).subscribe(v -> { }, e -> { });
  }
}
