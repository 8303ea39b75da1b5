package io.breakwater.benchmarks;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.hedgedBy;
import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.withDeadline;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.hedge.HedgePolicy;
import io.breakwater.retry.RetryPolicy;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import io.github.resilience4j.reactor.retry.RetryOperator;
import io.github.resilience4j.reactor.timelimiter.TimeLimiterOperator;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * The rows of {@link AsyncInterleaved} for timers: the variants of {@code DeadlineAsyncBenchmark} (P3b), of
 * {@code PipelineAsyncBenchmark} (P3) and of {@code HedgeBenchmark} (P11), built as those benchmarks build them.
 */
final class TimerRows {

  private TimerRows() {}

  static Map<String, Function<Mono<Integer>, Mono<Integer>>> deadlines() {
    TimeLimiterOperator<Integer> limiter = TimeLimiterOperator.of(TimeLimiter.of("bench",
        TimeLimiterConfig.custom().timeoutDuration(Duration.ofSeconds(5)).build()));
    Map<String, Function<Mono<Integer>, Mono<Integer>>> variants = new LinkedHashMap<>();
    variants.put("baseline", m -> m);
    variants.put("deadline", m -> m.transform(withDeadline(Duration.ofSeconds(5))));
    variants.put("deadlineAndPerCallTimeout",
        m -> m.transform(perCallTimeout()).transform(withDeadline(Duration.ofSeconds(10))));
    variants.put("reactorTimeout", m -> m.timeout(Duration.ofSeconds(5)));
    variants.put("resilience4jTimeLimiter", m -> m.transform(limiter));
    return variants;
  }

  static Map<String, Function<Mono<Integer>, Mono<Integer>>> pipelines() {
    CircuitBreaker breaker = CircuitBreaker.ofDefaults("bench");
    RetryPolicy retry = RetryPolicy.builder().name("bench").build();
    TimeLimiterOperator<Integer> limiter = TimeLimiterOperator.of(TimeLimiter.of("bench",
        TimeLimiterConfig.custom().timeoutDuration(Duration.ofSeconds(5)).build()));
    CircuitBreakerOperator<Integer> r4jBreaker = CircuitBreakerOperator.of(
        io.github.resilience4j.circuitbreaker.CircuitBreaker.of("bench", CircuitBreakerConfig.ofDefaults()));
    RetryOperator<Integer> r4jRetry = RetryOperator.of(Retry.of("bench", RetryConfig.custom().maxAttempts(4)
        .waitDuration(Duration.ofMillis(100)).build()));
    Map<String, Function<Mono<Integer>, Mono<Integer>>> variants = new LinkedHashMap<>();
    variants.put("baseline", m -> m);
    variants.put("breakwater", m -> m
        .transform(perCallTimeout())
        .transform(guardedBy(breaker))
        .transform(retryWithBudget(retry))
        .transform(withDeadline(Duration.ofSeconds(10))));
    variants.put("resilience4j", m -> m.transform(limiter).transform(r4jBreaker).transform(r4jRetry));
    return variants;
  }

  /** {@code HedgeBenchmark}'s variants: a hedge whose delay (5 s) no call reaches, against {@code withDeadline}. */
  static Map<String, Function<Mono<Integer>, Mono<Integer>>> hedges() {
    HedgePolicy hedge = HedgePolicy.builder().name("bench").delay(Duration.ofSeconds(5))
        .meterRegistry(new SimpleMeterRegistry()).build();
    Map<String, Function<Mono<Integer>, Mono<Integer>>> variants = new LinkedHashMap<>();
    variants.put("baseline", m -> m);
    variants.put("withDeadline", m -> m.transform(withDeadline(Duration.ofSeconds(5))));
    variants.put("hedgedBy", m -> m.transform(hedgedBy(hedge)));
    return variants;
  }
}
