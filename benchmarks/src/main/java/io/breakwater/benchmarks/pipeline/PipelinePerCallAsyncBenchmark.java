package io.breakwater.benchmarks.pipeline;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.withDeadline;

import io.breakwater.benchmarks.AsyncCallBenchmark;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.retry.Backoff;
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
 * The composed happy path as users write it (P3, P9, chain built per call): each call builds its chain inside the
 * method that makes it, exactly as {@code docs/getting-started.md} prints {@code flights()} ({@code perCallTimeout()},
 * {@code guardedBy(breaker)}, {@code retryWithBudget(Backoff.fullJitter(..))} inline, {@code withDeadline(10 s)}, all
 * with {@code transformDeferred}), against Resilience4j's TimeLimiter + CircuitBreaker + Retry operators built per
 * call the same way and against the bare call, with 1, 1 000 and 10 000 asynchronous calls in flight.
 *
 * <p>What is shared across calls is what the docs share: the circuit breaker (one per dependency) for Breakwater;
 * the {@code TimeLimiter}, {@code CircuitBreaker} and {@code Retry} instances for Resilience4j (held by its registries
 * in an application), whose operators are made per call. Every variant, the bare call included, goes through one
 * {@code Mono.defer} per call, which stands for the user's method being called: its cost is in the baseline.
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar PipelinePerCallAsyncBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -prof gc
 * </pre>
 */
public class PipelinePerCallAsyncBenchmark extends AsyncCallBenchmark {

  @Param({"1", "1000", "10000"})
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
      case "baseline" -> Mono.defer(() -> bare);
      case "breakwater" -> {
        CircuitBreaker breaker = CircuitBreaker.ofDefaults("flights");
        yield Mono.defer(() -> flights(bare, breaker));
      }
      case "resilience4j" -> {
        TimeLimiter timeLimiter = TimeLimiter.of("flights", TimeLimiterConfig.custom()
            .timeoutDuration(Duration.ofSeconds(5)).build());
        io.github.resilience4j.circuitbreaker.CircuitBreaker breaker =
            io.github.resilience4j.circuitbreaker.CircuitBreaker.of("flights", CircuitBreakerConfig.ofDefaults());
        Retry retry = Retry.of("flights", RetryConfig.custom().maxAttempts(4)
            .waitDuration(Duration.ofMillis(100)).build());
        yield Mono.defer(() -> bare
            .transformDeferred(TimeLimiterOperator.of(timeLimiter))
            .transformDeferred(CircuitBreakerOperator.of(breaker))
            .transformDeferred(RetryOperator.of(retry)));
      }
      default -> throw new IllegalArgumentException("unknown variant " + variant);
    };
  }

  /** {@code flights()} of getting-started.md, with the HTTP call replaced by the asynchronous one. */
  private static Mono<Integer> flights(Mono<Integer> call, CircuitBreaker breaker) {
    return call
        .transformDeferred(perCallTimeout())
        .transformDeferred(guardedBy(breaker))
        .transformDeferred(retryWithBudget(Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))))
        .transformDeferred(withDeadline(Duration.ofSeconds(10)));
  }
}
