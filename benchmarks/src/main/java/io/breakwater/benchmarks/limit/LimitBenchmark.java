package io.breakwater.benchmarks.limit;

import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.throttledBy;

import io.breakwater.benchmarks.BlackholeSubscriber;
import io.breakwater.limit.CallWeight;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.reactor.bulkhead.operator.BulkheadOperator;
import io.github.resilience4j.reactor.ratelimiter.operator.RateLimiterOperator;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * P10: the overhead of {@code limitedBy(fixed)} and of an in-memory {@code throttledBy} on asynchronous calls, against
 * Resilience4j's {@code BulkheadOperator} and {@code RateLimiterOperator} and against no operator, in the same run.
 * Each call is a {@code Sinks.One} that the benchmark completes after subscribing, so the permit is held while the
 * call is in flight; {@code oneInFlight} subscribes and completes one call at a time, {@code thousandInFlight}
 * subscribes 1 000 calls, then completes them. The operator is applied to each call, as {@code transformDeferred}
 * does. No limit is ever reached: the figure is the cost of taking and giving back a permit.
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar LimitBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
public class LimitBenchmark {

  private static final int THOUSAND = 1000;

  @Param({"baseline", "breakwaterLimitedBy", "resilience4jBulkhead", "breakwaterThrottledBy",
      "breakwaterThrottledByTokens", "resilience4jRateLimiter"})
  public String variant;

  private Function<Mono<Integer>, Publisher<Integer>> operator;
  private BlackholeSubscriber<Integer> subscriber;
  @SuppressWarnings("unchecked")
  private final Sinks.One<Integer>[] calls = new Sinks.One[THOUSAND];

  @Setup
  public void setUp(Blackhole blackhole) {
    subscriber = new BlackholeSubscriber<>(blackhole);
    operator = switch (variant) {
      case "baseline" -> mono -> mono;
      case "breakwaterLimitedBy" -> {
        Function<Publisher<Integer>, Publisher<Integer>> limit = limitedBy(ConcurrencyLimit.fixed(10 * THOUSAND));
        yield limit::apply;
      }
      case "resilience4jBulkhead" -> {
        BulkheadOperator<Integer> bulkhead = BulkheadOperator.of(Bulkhead.of("bench", BulkheadConfig.custom()
            .maxConcurrentCalls(10 * THOUSAND).maxWaitDuration(Duration.ZERO).build()));
        yield bulkhead::apply;
      }
      case "breakwaterThrottledBy" -> {
        Function<Publisher<Integer>, Publisher<Integer>> limit = throttledBy(RateLimit.builder("bench")
            .requests(Long.MAX_VALUE / 4, Duration.ofSeconds(1)).build());
        yield limit::apply;
      }
      case "breakwaterThrottledByTokens" -> {
        RateLimit limit = RateLimit.builder("bench").requests(Long.MAX_VALUE / 4, Duration.ofSeconds(1))
            .tokens(Long.MAX_VALUE / 4, Duration.ofSeconds(1)).build();
        CallWeight<Integer> weight = CallWeight.tokens(100, Integer::longValue);
        Function<Publisher<Integer>, Publisher<Integer>> throttle = throttledBy(limit, weight);
        yield throttle::apply;
      }
      case "resilience4jRateLimiter" -> {
        RateLimiterOperator<Integer> rateLimiter = RateLimiterOperator.of(RateLimiter.of("bench",
            RateLimiterConfig.custom().limitForPeriod(Integer.MAX_VALUE / 2)
                .limitRefreshPeriod(Duration.ofSeconds(1)).timeoutDuration(Duration.ZERO).build()));
        yield rateLimiter::apply;
      }
      default -> throw new IllegalArgumentException("unknown variant " + variant);
    };
  }

  @Benchmark
  public void oneInFlight() {
    Sinks.One<Integer> call = Sinks.one();
    operator.apply(call.asMono()).subscribe(subscriber);
    call.tryEmitValue(42);
  }

  @Benchmark
  @OperationsPerInvocation(THOUSAND)
  public void thousandInFlight() {
    for (int i = 0; i < THOUSAND; i++) {
      Sinks.One<Integer> call = Sinks.one();
      calls[i] = call;
      operator.apply(call.asMono()).subscribe(subscriber);
    }
    for (int i = 0; i < THOUSAND; i++) {
      calls[i].tryEmitValue(i);
    }
  }
}
