package io.breakwater;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.retry.Backoff;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Users build the chain inside the method that makes each call ({@code flights()} of getting-started.md): the
 * operators that call makes from the same settings are the same stateless objects, made once, and every call still
 * gets its own deadline, timer and breaker admission.
 */
class ChainBuiltPerCallTest {

  @Test
  void perCallTimeoutIsOneOperatorForEveryCall() {
    assertThat(Breakwater.<String>perCallTimeout()).isSameAs(Breakwater.<Integer>perCallTimeout());
  }

  @Test
  void withDeadlineOfEqualBudgetsIsOneOperator() {
    assertThat(Breakwater.<String>withDeadline(Duration.ofSeconds(10)))
        .isSameAs(Breakwater.<String>withDeadline(Duration.ofMillis(10_000)));
    assertThat(Breakwater.<String>withDeadline(Duration.ofSeconds(10)))
        .isNotSameAs(Breakwater.<String>withDeadline(Duration.ofSeconds(11)));
  }

  @Test
  void guardedByTheSameBreakerIsOneOperator() {
    CircuitBreaker breaker = CircuitBreaker.ofDefaults("flights");
    assertThat(Breakwater.<String>guardedBy(breaker)).isSameAs(Breakwater.<Integer>guardedBy(breaker));
    assertThat(Breakwater.<String>guardedBy(breaker))
        .isNotSameAs(Breakwater.<String>guardedBy(CircuitBreaker.ofDefaults("flights")));
  }

  @Test
  void buildingTheInlineRetryRegistersNoMeterAndLogsNothing() {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    Metrics.globalRegistry.add(meters);   // what a Spring Boot application's registry is bound to
    CircuitBreaker breaker = CircuitBreaker.ofDefaults("hotels");   // once per dependency, with its meters
    List<String> before = names(meters);
    PrintStream err = System.err;
    ByteArrayOutputStream logs = new ByteArrayOutputStream();
    System.setErr(new PrintStream(logs, true, StandardCharsets.UTF_8));   // slf4j-simple writes there
    try {
      for (int call = 0; call < 3; call++) {
        flights(Mono.just("offers"), breaker);
      }
      assertThat(names(meters)).as("meters registered by building three calls").isEqualTo(before);
      assertThat(logs.toString(StandardCharsets.UTF_8)).as("lines logged by building three calls").isEmpty();
    } finally {
      System.setErr(err);
      Metrics.globalRegistry.remove(meters);
    }
  }

  @Test
  void theInlineRetryOfEqualBackoffsIsOneOperator() {
    assertThat(Breakwater.<String>retryWithBudget(Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))))
        .isSameAs(Breakwater.<Integer>retryWithBudget(Backoff.fullJitter(Duration.ofMillis(200),
            Duration.ofSeconds(2))))
        .isNotSameAs(Breakwater.<String>retryWithBudget(Backoff.fullJitter(Duration.ofMillis(300),
            Duration.ofSeconds(2))));
  }

  /** {@code flights()} of getting-started.md, the HTTP call given. */
  private static Mono<String> flights(Mono<String> call, CircuitBreaker breaker) {
    return call
        .transformDeferred(perCallTimeout())
        .transformDeferred(guardedBy(breaker))
        .transformDeferred(retryWithBudget(Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))))
        .transformDeferred(withDeadline(Duration.ofSeconds(10)));
  }

  private static List<String> names(MeterRegistry registry) {
    return registry.getMeters().stream().map(m -> m.getId().toString()).sorted().toList();
  }

  @Test
  void aBadBudgetIsStillRefusedEveryTime() {
    for (int i = 0; i < 2; i++) {
      assertThatThrownBy(() -> withDeadline(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("negative");
    }
  }

  @Test
  void eachCallBuiltWithTheSharedOperatorsHasItsOwnDeadline() {
    CircuitBreaker breaker = CircuitBreaker.ofDefaults("flights");
    StepVerifier.withVirtualTime(() -> Mono.<String>never()
            .transformDeferred(perCallTimeout())
            .transformDeferred(guardedBy(breaker))
            .transformDeferred(withDeadline(Duration.ofSeconds(10)))
            .onErrorResume(CallTimeoutException.class, first -> Mono.delay(Duration.ofSeconds(1))
                // a second call, built after the first timed out: its per-call budget runs from its own start
                .then(Mono.<String>never()
                    .transformDeferred(perCallTimeout())
                    .transformDeferred(guardedBy(breaker))
                    .transformDeferred(withDeadline(Duration.ofSeconds(10))))))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(6_000 + 1_000 + 5_999))   // 6 s (0.6 × 10 s), 1 s, then 0.6 × 10 s
        .thenAwait(Duration.ofMillis(1))
        .expectError(CallTimeoutException.class)
        .verify(Duration.ofSeconds(5));
    StepVerifier.withVirtualTime(() -> Mono.<String>never().transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(9_999))
        .thenAwait(Duration.ofMillis(1))
        .expectError(DeadlineExceededException.class)
        .verify(Duration.ofSeconds(5));
  }
}
