package io.breakwater.benchmarks;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;
import reactor.core.publisher.Mono;

/**
 * A benchmark of one operator on asynchronous calls, with 1 and 10 000 calls in flight on the benchmark thread: a
 * subclass says which operator wraps the call ({@link #call}, usually chosen by its own {@code variant} parameter).
 * One operation answers the oldest call and subscribes a new one (see {@link AsyncCalls}), so every timeout arms a
 * timer and cancels it when the call answers.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public abstract class AsyncCallBenchmark {

  private AsyncCalls calls;

  /** The calls kept in flight: each subclass's {@code inFlight} parameter (1 and 10 000, or more counts). */
  protected abstract int inFlight();

  /** The benchmarked call: {@code bare} under the operator (or operators) measured. */
  protected abstract Mono<Integer> call(Mono<Integer> bare);

  @Setup(Level.Trial)
  public void startCalls(Blackhole blackhole) {
    calls = new AsyncCalls(inFlight());
    calls.start(call(calls.source()), new BlackholeSubscriber<>(blackhole));
  }

  @TearDown(Level.Trial)
  public void drainCalls() {
    calls.drain();
  }

  @Benchmark
  public void call() {
    calls.next();
  }
}
