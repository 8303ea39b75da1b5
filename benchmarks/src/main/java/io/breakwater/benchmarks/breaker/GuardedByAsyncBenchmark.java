package io.breakwater.benchmarks.breaker;

import static io.breakwater.Breakwater.guardedBy;

import io.breakwater.benchmarks.AsyncCalls;
import io.breakwater.benchmarks.BlackholeSubscriber;
import io.breakwater.breaker.CircuitBreaker;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.Blackhole;
import reactor.core.publisher.Mono;

/**
 * P1 on asynchronous calls: {@code guardedBy(breaker)} against Resilience4j's {@code CircuitBreakerOperator} and no
 * operator, with 1 and 10 000 calls in flight per thread, on one thread and on two threads sharing one breaker. Each
 * call answers after subscription, so the breaker times it (slow-call trigger on, the default) and records its outcome
 * on completion. One operation answers the oldest call and subscribes a new one (see {@link AsyncCalls}).
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar GuardedByAsyncBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class GuardedByAsyncBenchmark {

  /** The breakers, shared by every thread of a trial. */
  @State(Scope.Benchmark)
  public static class Breakers {
    @Param({"baseline", "breakwater", "breakwaterNoSlowCalls", "resilience4j"})
    public String variant;

    CircuitBreaker breakwater;
    CircuitBreakerOperator<Integer> resilience4j;

    @Setup(Level.Trial)
    public void setUp() {
      breakwater = variant.equals("breakwaterNoSlowCalls")
          ? CircuitBreaker.builder("bench").noSlowCallTrigger().build()
          : CircuitBreaker.ofDefaults("bench");
      resilience4j = CircuitBreakerOperator.of(
          io.github.resilience4j.circuitbreaker.CircuitBreaker.ofDefaults("bench"));
    }
  }

  /** One thread's calls in flight. */
  @State(Scope.Thread)
  public static class Calls {
    @Param({"1", "10000"})
    public int inFlight;

    AsyncCalls calls;

    @Setup(Level.Trial)
    public void setUp(Breakers breakers, Blackhole blackhole) {
      calls = new AsyncCalls(inFlight);
      Mono<Integer> bare = calls.source();
      Mono<Integer> call = switch (breakers.variant) {
        case "baseline" -> bare;
        case "breakwater", "breakwaterNoSlowCalls" -> bare.transform(guardedBy(breakers.breakwater));
        case "resilience4j" -> bare.transform(breakers.resilience4j);
        default -> throw new IllegalArgumentException("unknown variant " + breakers.variant);
      };
      calls.start(call, new BlackholeSubscriber<>(blackhole));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      calls.drain();
    }
  }

  @Benchmark
  public void oneThread(Calls c) {
    c.calls.next();
  }

  @Benchmark
  @Threads(2)
  public void twoThreads(Calls c) {
    c.calls.next();
  }
}
