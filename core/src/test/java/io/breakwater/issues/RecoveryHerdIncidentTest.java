package io.breakwater.issues;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Incident 6: when the search service came back, every waiting agent hit it at once as the breaker went half-open,
 * and knocked it over again. Breakwater admits one probe, then ramps traffic up; the rest get a degraded answer
 * at once instead of queueing against the service.
 */
class RecoveryHerdIncidentTest {

  static final Duration VERIFY = Duration.ofSeconds(5);
  static final int HERD = 100;

  final AtomicBoolean down = new AtomicBoolean(true);
  final AtomicInteger requests = new AtomicInteger();

  Mono<String> search(String q) {
    return Mono.defer(() -> {
      requests.incrementAndGet();
      return down.get() ? Mono.error(new HttpStatusException(503)) : Mono.just("results for " + q);
    }).delayElement(Duration.ofMillis(200));
  }

  Mono<Long> herd(Tool<String, String> tool, AtomicInteger degraded) {
    return Flux.range(0, HERD)
        .flatMap(i -> tool.outcome("q" + i), HERD)
        .filter(o -> o instanceof ToolOutcome.Success<String> s && s.degraded())
        .doOnNext(o -> degraded.incrementAndGet())
        .count();
  }

  @Test
  void oneProbeThenARampNotAHerd() {
    CircuitBreakerRegistry breakers = CircuitBreakerRegistry.builder()
        .breakers(name -> CircuitBreaker.builder(name).minimumCalls(10).failureRateThreshold(0.5)
            .openDuration(Duration.ofSeconds(30)).halfOpenProbes(1).rampUp(Duration.ofSeconds(10), 0.1)
            .noSlowCallTrigger().meterRegistry(new SimpleMeterRegistry()).build())
        .build();
    Tool<String, String> tool = Tool.of(ToolDescriptor.builder("search.web").sideEffect(SideEffect.READ_ONLY)
            .retry(RetryPolicy.builder().name("search").maxRetries(0).budget(RetryBudget.unlimited()).build())
            .breakers(breakers).meterRegistry(new SimpleMeterRegistry()).eventLog(e -> { }).build(),
        this::search, String.class)
        .withFallbacks(Fallbacks.<String, String>builder().orDefault("search is recovering, try later").build());
    AtomicInteger degraded = new AtomicInteger();
    int[] reached = new int[3];

    StepVerifier.withVirtualTime(() -> herd(tool, degraded)                        // the outage opens the breaker
            .then(Mono.delay(Duration.ofSeconds(30)))                               // open duration passes
            .then(Mono.fromRunnable(() -> {
              down.set(false);                                                      // the service is back
              reached[0] = requests.get();
            }))
            .then(herd(tool, degraded))                                            // the herd arrives at half-open
            .then(Mono.fromRunnable(() -> reached[1] = requests.get()))
            .then(Mono.delay(Duration.ofSeconds(1)))
            .then(herd(tool, degraded))                                            // one second into the ramp
            .then(Mono.fromRunnable(() -> reached[2] = requests.get())))
        .thenAwait(Duration.ofMinutes(1))
        .expectComplete().verify(VERIFY);

    // the outage: the breaker opened after its minimum of 10 failing calls; the other 90 never reached the service
    assertThat(reached[0]).isEqualTo(10);
    // half-open: exactly one probe of 100 callers reached the recovering service
    assertThat(reached[1] - reached[0]).isEqualTo(1);
    // a second into the ramp (~19 % admitted), far fewer than the herd
    assertThat(reached[2] - reached[1]).isBetween(1, HERD / 3);
    // everyone else got the degraded answer at once, without retrying against the open breaker
    assertThat(degraded.get()).isEqualTo(3 * HERD - (reached[2] - reached[0]));
  }
}
