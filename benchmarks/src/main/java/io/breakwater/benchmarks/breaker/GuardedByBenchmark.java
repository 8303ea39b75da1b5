package io.breakwater.benchmarks.breaker;

import static io.breakwater.Breakwater.guardedBy;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.Blackhole;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

/**
 * P1: the happy-path overhead of {@code guardedBy(breaker)} over no operator, against Resilience4j's
 * {@code CircuitBreakerOperator}, on a synchronous {@code Mono.fromSupplier(() -> 42)} subscribed directly, with one
 * thread and with two threads sharing one breaker. Pipelines are assembled once, with {@code transform} (the
 * operator's own per-call cost) or {@code transformDeferred} (the operator applied again at each subscription, as
 * the docs recommend); each operation is one subscription.
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar GuardedByBenchmark -f 1 -wi 2 -i 3 -w 1s -r 1s -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
public class GuardedByBenchmark {

  private Mono<Integer> bare;
  private Mono<Integer> breakwater;
  private Mono<Integer> breakwaterNoSlowCalls;
  private Mono<Integer> breakwaterFamily;
  private Mono<Integer> resilience4j;
  private Mono<Integer> breakwaterDeferred;
  private Mono<Integer> resilience4jDeferred;

  @Setup
  public void setUp() {
    bare = Mono.fromSupplier(() -> 42);
    breakwater = bare.transform(guardedBy(CircuitBreaker.ofDefaults("bench")));
    breakwaterNoSlowCalls = bare.transform(guardedBy(CircuitBreaker.builder("bench-fast").noSlowCallTrigger()
        .build()));
    breakwaterFamily = bare.transform(guardedBy(CircuitBreakerRegistry.ofDefaults(), "gmail.send"));
    io.github.resilience4j.circuitbreaker.CircuitBreaker r4j =
        io.github.resilience4j.circuitbreaker.CircuitBreaker.ofDefaults("bench");
    resilience4j = bare.transform(CircuitBreakerOperator.of(r4j));
    CircuitBreaker deferred = CircuitBreaker.ofDefaults("bench-deferred");
    breakwaterDeferred = bare.transformDeferred(guardedBy(deferred));
    resilience4jDeferred = bare.transformDeferred(CircuitBreakerOperator.of(r4j));
  }

  private static void run(Mono<Integer> mono, Blackhole bh) {
    mono.subscribe(new Consumer(bh));
  }

  @Benchmark
  public void baseline(Blackhole bh) {
    run(bare, bh);
  }

  @Benchmark
  public void breakwater(Blackhole bh) {
    run(breakwater, bh);
  }

  @Benchmark
  public void breakwaterNoSlowCalls(Blackhole bh) {
    run(breakwaterNoSlowCalls, bh);
  }

  @Benchmark
  public void breakwaterToolAndFamily(Blackhole bh) {
    run(breakwaterFamily, bh);
  }

  @Benchmark
  public void resilience4j(Blackhole bh) {
    run(resilience4j, bh);
  }

  @Benchmark
  @Threads(2)
  public void baseline2Threads(Blackhole bh) {
    run(bare, bh);
  }

  @Benchmark
  @Threads(2)
  public void breakwater2Threads(Blackhole bh) {
    run(breakwater, bh);
  }

  @Benchmark
  @Threads(2)
  public void breakwaterNoSlowCalls2Threads(Blackhole bh) {
    run(breakwaterNoSlowCalls, bh);
  }

  @Benchmark
  @Threads(2)
  public void resilience4j2Threads(Blackhole bh) {
    run(resilience4j, bh);
  }

  @Benchmark
  public void breakwaterDeferred(Blackhole bh) {
    run(breakwaterDeferred, bh);
  }

  @Benchmark
  public void resilience4jDeferred(Blackhole bh) {
    run(resilience4jDeferred, bh);
  }

  @Benchmark
  @Threads(2)
  public void breakwaterDeferred2Threads(Blackhole bh) {
    run(breakwaterDeferred, bh);
  }

  @Benchmark
  @Threads(2)
  public void resilience4jDeferred2Threads(Blackhole bh) {
    run(resilience4jDeferred, bh);
  }

  /** Requests everything and hands each signal to the blackhole. */
  static final class Consumer implements CoreSubscriber<Integer> {
    private final Blackhole bh;

    Consumer(Blackhole bh) {
      this.bh = bh;
    }

    @Override
    public void onSubscribe(Subscription s) {
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(Integer value) {
      bh.consume(value);
    }

    @Override
    public void onError(Throwable t) {
      bh.consume(t);
    }

    @Override
    public void onComplete() {
      bh.consume(true);
    }
  }
}
