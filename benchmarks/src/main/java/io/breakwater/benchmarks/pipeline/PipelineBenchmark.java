package io.breakwater.benchmarks.pipeline;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.withDeadline;

import io.breakwater.benchmarks.BlackholeSubscriber;
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
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;
import reactor.core.publisher.Mono;

/**
 * The composed happy path (P3, P9): deadline + retry + breaker + per-attempt timeout on a synchronous
 * {@code Mono.fromSupplier(() -> 42)}, against Resilience4j's TimeLimiter + CircuitBreaker + Retry and against no
 * operator, each assembled once and subscribed per operation.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PipelineBenchmark {

  private Mono<Integer> baseline;
  private Mono<Integer> breakwater;
  private Mono<Integer> resilience4j;

  @Setup
  public void setUp() {
    baseline = Mono.fromSupplier(() -> 42);
    breakwater = baseline
        .transform(perCallTimeout())
        .transform(guardedBy(CircuitBreaker.ofDefaults("bench")))
        .transform(retryWithBudget(RetryPolicy.builder().name("bench").build()))
        .transform(withDeadline(Duration.ofSeconds(10)));
    TimeLimiter timeLimiter = TimeLimiter.of("bench", TimeLimiterConfig.custom()
        .timeoutDuration(Duration.ofSeconds(5)).build());
    io.github.resilience4j.circuitbreaker.CircuitBreaker breaker =
        io.github.resilience4j.circuitbreaker.CircuitBreaker.of("bench", CircuitBreakerConfig.ofDefaults());
    Retry retry = Retry.of("bench", RetryConfig.custom().maxAttempts(4).waitDuration(Duration.ofMillis(100)).build());
    resilience4j = baseline
        .transform(TimeLimiterOperator.of(timeLimiter))
        .transform(CircuitBreakerOperator.of(breaker))
        .transform(RetryOperator.of(retry));
  }

  @Benchmark
  public void baseline(Blackhole bh) {
    baseline.subscribe(new BlackholeSubscriber<>(bh));
  }

  @Benchmark
  public void breakwater(Blackhole bh) {
    breakwater.subscribe(new BlackholeSubscriber<>(bh));
  }

  @Benchmark
  public void resilience4j(Blackhole bh) {
    resilience4j.subscribe(new BlackholeSubscriber<>(bh));
  }
}
