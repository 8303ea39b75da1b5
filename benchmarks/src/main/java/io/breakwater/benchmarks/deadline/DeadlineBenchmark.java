package io.breakwater.benchmarks.deadline;

import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.withDeadline;

import io.breakwater.benchmarks.BlackholeSubscriber;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * {@code withDeadline} and {@code perCallTimeout} on a synchronous call, against no operator and Reactor's
 * {@code timeout(Duration)}, in the same run. A synchronous source completes before any timer would be armed, so
 * Breakwater's cost is the Context write and the deadline object; Reactor's {@code timeout} schedules and cancels a
 * timer on every call.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class DeadlineBenchmark {

  private final Mono<Integer> call = Mono.fromSupplier(() -> 42);
  private final Function<Publisher<Integer>, Publisher<Integer>> deadline = withDeadline(Duration.ofSeconds(5));
  private final Function<Publisher<Integer>, Publisher<Integer>> perCall = perCallTimeout();
  private BlackholeSubscriber<Integer> subscriber;

  @Setup
  public void setUp(Blackhole blackhole) {
    subscriber = new BlackholeSubscriber<>(blackhole);
  }

  @Benchmark
  public void baseline() {
    call.subscribe(subscriber);
  }

  @Benchmark
  public void reactorTimeout() {
    call.timeout(Duration.ofSeconds(5)).subscribe(subscriber);
  }

  @Benchmark
  public void deadline() {
    call.transformDeferred(deadline).subscribe(subscriber);
  }

  @Benchmark
  public void deadlineAndPerCallTimeout() {
    call.transformDeferred(perCall).transformDeferred(deadline).subscribe(subscriber);
  }
}
