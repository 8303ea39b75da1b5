package io.breakwater.benchmarks;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.internal.limit.RateEngine;
import io.breakwater.limit.RateLimit;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * What one clock read costs, as the operators read it: the JVM's two clocks, the default scheduler's
 * {@code now(..)} (Reactor's {@code ParallelScheduler} does not override {@code Scheduler.now}, so it is
 * {@code System.currentTimeMillis()} converted), and the path the rate limit and the breaker take to it (their
 * {@code Supplier<Scheduler>}, resolved per call, then {@code now(NANOSECONDS)}). Run it beside the operators whose
 * overhead it explains, in the same run:
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar 'ClockReadBenchmark|LimitBenchmark.thousandInFlight' -f 1 -wi 3 -i 5 -w 1s -r 1s
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
public class ClockReadBenchmark {

  private Scheduler parallel;
  private Supplier<Scheduler> limitClock;
  private Supplier<Scheduler> breakerClock;

  @Setup
  public void setUp() {
    parallel = Schedulers.parallel();
    RateLimit limit = RateLimit.builder("bench").requests(Long.MAX_VALUE / 4, Duration.ofSeconds(1)).build();
    limitClock = ((RateEngine) limit).settings().scheduler();
    breakerClock = CircuitBreaker.ofDefaults("bench").scheduler();
  }

  @Benchmark
  public long nanoTime() {
    return System.nanoTime();
  }

  @Benchmark
  public long currentTimeMillis() {
    return System.currentTimeMillis();
  }

  /** {@code Schedulers.parallel()} looked up each time, then read in nanoseconds. */
  @Benchmark
  public long parallelNowNanos() {
    return Schedulers.parallel().now(TimeUnit.NANOSECONDS);
  }

  /** The same scheduler, held. */
  @Benchmark
  public long heldParallelNowNanos() {
    return parallel.now(TimeUnit.NANOSECONDS);
  }

  /** The same scheduler in milliseconds: no conversion. */
  @Benchmark
  public long heldParallelNowMillis() {
    return parallel.now(TimeUnit.MILLISECONDS);
  }

  /** The rate limit's read: its settings' supplier resolved, then {@code now(NANOSECONDS)}. */
  @Benchmark
  public long limitNow() {
    return limitClock.get().now(TimeUnit.NANOSECONDS);
  }

  /** The breaker's read: its supplier resolved (once per subscription), then {@code now(NANOSECONDS)}. */
  @Benchmark
  public long breakerNow() {
    return breakerClock.get().now(TimeUnit.NANOSECONDS);
  }
}
