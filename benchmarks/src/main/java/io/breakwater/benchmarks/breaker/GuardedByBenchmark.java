package io.breakwater.benchmarks.breaker;

import static io.breakwater.Breakwater.guardedBy;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import java.util.concurrent.TimeUnit;
import io.breakwater.benchmarks.BlackholeSubscriber;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.Blackhole;
import reactor.core.publisher.Mono;

/**
 * P1: the happy-path overhead of {@code guardedBy(breaker)} over no operator, against Resilience4j's
 * {@code CircuitBreakerOperator}, on a synchronous {@code Mono.fromSupplier(() -> 42)} subscribed directly, with one
 * thread and with two threads sharing one breaker. Each operation is one subscription.
 *
 * <p>Variants: {@code baseline} (no operator); {@code breakwater} (defaults: slow-call trigger on);
 * {@code breakwaterNoSlowCalls}; {@code breakwaterToolAndFamily} (a registry guard: family then tool breaker);
 * {@code resilience4j} (defaults) — all assembled once with {@code transform}, so the figure is the operator's
 * per-call cost — and {@code breakwaterDeferred} / {@code resilience4jDeferred}, applied again at each subscription
 * with {@code transformDeferred}, as the docs recommend.
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar GuardedByBenchmark -f 1 -wi 2 -i 3 -w 1s -r 1s -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
public class GuardedByBenchmark {

  @Param({"baseline", "breakwater", "breakwaterNoSlowCalls", "breakwaterToolAndFamily", "resilience4j",
      "breakwaterDeferred", "resilience4jDeferred"})
  public String variant;

  private Mono<Integer> call;

  @Setup
  public void setUp() {
    Mono<Integer> bare = Mono.fromSupplier(() -> 42);
    call = switch (variant) {
      case "baseline" -> bare;
      case "breakwater" -> bare.transform(guardedBy(CircuitBreaker.ofDefaults("bench")));
      case "breakwaterNoSlowCalls" -> bare.transform(guardedBy(CircuitBreaker.builder("bench").noSlowCallTrigger()
          .build()));
      case "breakwaterToolAndFamily" -> bare.transform(guardedBy(CircuitBreakerRegistry.ofDefaults(), "gmail.send"));
      case "resilience4j" -> bare.transform(CircuitBreakerOperator.of(
          io.github.resilience4j.circuitbreaker.CircuitBreaker.ofDefaults("bench")));
      case "breakwaterDeferred" -> bare.transformDeferred(guardedBy(CircuitBreaker.ofDefaults("bench")));
      case "resilience4jDeferred" -> bare.transformDeferred(CircuitBreakerOperator.of(
          io.github.resilience4j.circuitbreaker.CircuitBreaker.ofDefaults("bench")));
      default -> throw new IllegalArgumentException("unknown variant " + variant);
    };
  }

  @Benchmark
  public void oneThread(Blackhole bh) {
    call.subscribe(new BlackholeSubscriber<>(bh));
  }

  @Benchmark
  @Threads(2)
  public void twoThreads(Blackhole bh) {
    call.subscribe(new BlackholeSubscriber<>(bh));
  }
}
