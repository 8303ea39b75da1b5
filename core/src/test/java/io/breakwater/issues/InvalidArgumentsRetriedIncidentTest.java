package io.breakwater.issues;

import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.SideEffect;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/**
 * Incident 8: the model sent a malformed date; the tool answered 400 and the framework retried it 5 times, then
 * returned a generic error, so the model sent the same date again. With Breakwater an invalid argument is tried
 * once, no fallback hides it, no breaker counts it, and the model is told to fix the argument.
 */
class InvalidArgumentsRetriedIncidentTest {

  static final Duration VERIFY = Duration.ofSeconds(5);

  record Search(String from, String to, String date) {}

  final AtomicInteger requests = new AtomicInteger();

  Mono<String> search(Search s) {
    return Mono.defer(() -> {
      requests.incrementAndGet();
      return s.date().matches("\\d{4}-\\d{2}-\\d{2}")
          ? Mono.just("3 flights on " + s.date())
          : Mono.error(new HttpStatusException(400, Map.of(), "date must be YYYY-MM-DD, got " + s.date()));
    });
  }

  @Test
  void aPlainRetryRepeatsTheSameBadRequestSixTimes() {
    StepVerifier.withVirtualTime(() -> search(new Search("LYS", "LIS", "next friday"))
            .retryWhen(Retry.fixedDelay(5, Duration.ofMillis(500))))
        .thenAwait(Duration.ofSeconds(10)).expectError().verify(VERIFY);
    assertThat(requests).hasValue(6);
  }

  @Test
  void anInvalidArgumentIsTriedOnceAndTheModelIsToldHowToFixIt() {
    CircuitBreakerRegistry breakers = CircuitBreakerRegistry.builder()
        .breakers(name -> CircuitBreaker.builder(name).minimumCalls(2).meterRegistry(new SimpleMeterRegistry())
            .build())
        .build();
    Tool<Search, String> flights = Tool.of(ToolDescriptor.builder("flights.search").sideEffect(SideEffect.READ_ONLY)
            .breakers(breakers).meterRegistry(new SimpleMeterRegistry()).eventLog(e -> { }).build(),
        this::search, String.class)
        .withFallbacks(Fallbacks.<Search, String>builder().orDefault("no flights found").build());

    StepVerifier.withVirtualTime(() -> flights.outcome(new Search("LYS", "LIS", "next friday"))
            .map(ToolOutcome::forModel)
            .concatWith(flights.outcome(new Search("LYS", "LIS", "2026-12-04")).map(ToolOutcome::forModel))
            .collectList()
            .map(answers -> List.of(answers.get(0), answers.get(1), breakers.breaker("flights.search").state()))
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofSeconds(30)).build())))
        .assertNext(answers -> {
          assertThat((String) answers.get(0)).startsWith("""
              tool_failure: flights.search
              kind: invalid_argument
              reason: HTTP 400: date must be YYYY-MM-DD, got next friday
              next: fix the arguments (HTTP 400: date must be YYYY-MM-DD, got next friday) and call flights.search \
              again""").contains("avoid: repeating the same arguments");
          // the fixed call works: the breaker did not count the 400, and no default answer hid it
          assertThat(answers.get(1)).isEqualTo("3 flights on 2026-12-04");
          assertThat(answers.get(2)).isEqualTo(CircuitBreaker.State.CLOSED);
        })
        .expectComplete().verify(VERIFY);
    assertThat(requests).hasValue(2);
  }
}
