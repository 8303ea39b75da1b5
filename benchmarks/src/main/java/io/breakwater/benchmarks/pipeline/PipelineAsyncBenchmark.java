package io.breakwater.benchmarks.pipeline;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.withDeadline;

import io.breakwater.benchmarks.AsyncCallBenchmark;
import io.breakwater.benchmarks.AsyncCalls;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.retry.RetryPolicy;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import io.github.resilience4j.reactor.retry.RetryOperator;
import io.github.resilience4j.reactor.timelimiter.TimeLimiterOperator;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import java.time.Duration;
import org.openjdk.jmh.annotations.Param;
import reactor.core.publisher.Mono;

/**
 * The composed happy path on asynchronous calls (P3, P9): deadline + retry + breaker + per-attempt timeout against
 * Resilience4j's TimeLimiter + CircuitBreaker + Retry and against no operator, with 1 and 10 000 calls in flight.
 * Each call answers after subscription, so the deadline and the per-attempt timeout are armed and cancelled and the
 * breakers time the call. One operation answers the oldest call and subscribes a new one (see {@link AsyncCalls}).
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar PipelineAsyncBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -prof gc
 * </pre>
 */
public class PipelineAsyncBenchmark extends AsyncCallBenchmark {

  @Param({"1", "10000"})
  public int inFlight;

  @Override
  protected int inFlight() {
    return inFlight;
  }

  @Param({"baseline", "breakwater", "resilience4j"})
  public String variant;

  @Override
  protected Mono<Integer> call(Mono<Integer> bare) {
    return switch (variant) {
      case "baseline" -> bare;
      case "breakwater" -> bare
          .transform(perCallTimeout())
          .transform(guardedBy(CircuitBreaker.ofDefaults("bench")))
          .transform(retryWithBudget(RetryPolicy.builder().name("bench").build()))
          .transform(withDeadline(Duration.ofSeconds(10)));
      case "resilience4j" -> bare
          .transform(TimeLimiterOperator.of(TimeLimiter.of("bench", TimeLimiterConfig.custom()
              .timeoutDuration(Duration.ofSeconds(5)).build())))
          .transform(CircuitBreakerOperator.of(io.github.resilience4j.circuitbreaker.CircuitBreaker.of("bench",
              CircuitBreakerConfig.ofDefaults())))
          .transform(RetryOperator.of(Retry.of("bench", RetryConfig.custom().maxAttempts(4)
              .waitDuration(Duration.ofMillis(100)).build())));
      default -> throw new IllegalArgumentException("unknown variant " + variant);
    };
  }
}
