package io.breakwater.benchmarks.retry;

import io.breakwater.Breakwater;
import io.breakwater.retry.RetryPolicy;
import io.github.resilience4j.reactor.retry.RetryOperator;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import io.breakwater.benchmarks.BlackholeSubscriber;
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
 * Success-path overhead of {@code retryWithBudget} on a synchronous {@code Mono.fromSupplier(() -> 42)}, against no
 * operator, Reactor's {@code retryWhen(Retry.backoff(3, 100 ms))} and Resilience4j's {@code RetryOperator}, each
 * assembled once and subscribed per operation by a minimal subscriber.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RetrySuccessBenchmark {

  private Mono<Integer> baseline;
  private Mono<Integer> breakwater;
  private Mono<Integer> reactorRetryWhen;
  private Mono<Integer> resilience4j;

  @Setup
  public void setUp() {
    baseline = Mono.fromSupplier(() -> 42);
    breakwater = baseline.transform(Breakwater.retryWithBudget(RetryPolicy.builder().name("bench").build()));
    reactorRetryWhen = baseline.retryWhen(reactor.util.retry.Retry.backoff(3, Duration.ofMillis(100)));
    Retry retry = Retry.of("bench", RetryConfig.custom().maxAttempts(4).waitDuration(Duration.ofMillis(100)).build());
    resilience4j = baseline.transform(RetryOperator.of(retry));
  }

  @Benchmark
  public void baseline(Blackhole bh) {
    baseline.subscribe(new BlackholeSubscriber<>(bh));
  }

  @Benchmark
  public void breakwaterRetryWithBudget(Blackhole bh) {
    breakwater.subscribe(new BlackholeSubscriber<>(bh));
  }

  @Benchmark
  public void reactorRetryWhenBackoff(Blackhole bh) {
    reactorRetryWhen.subscribe(new BlackholeSubscriber<>(bh));
  }

  @Benchmark
  public void resilience4jRetryOperator(Blackhole bh) {
    resilience4j.subscribe(new BlackholeSubscriber<>(bh));
  }
}
