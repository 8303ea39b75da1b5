package io.breakwater.benchmarks.stream;

import io.breakwater.Breakwater;
import io.breakwater.stream.StreamTimeouts;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

/**
 * P4: the cost per element of {@code idleTimeout} on a 1 M-element {@code Flux.range}, against the bare stream and
 * {@code Flux.timeout(Duration)}. The subscriber requests after subscription, so that every operator arms its timer
 * (a stream that ends inside {@code onSubscribe} would never arm {@code idleTimeout}'s).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class IdleTimeoutBenchmark {

  static final int N = 1_000_000;
  static final Duration TIMEOUT = Duration.ofSeconds(5);

  private final Flux<Integer> bare = Flux.range(0, N);
  private final Flux<Integer> idle = Flux.range(0, N).transform(Breakwater.idleTimeout(TIMEOUT));
  private final Flux<Integer> idleWithProgressTest = Flux.range(0, N)
      .transform(Breakwater.idleTimeout(TIMEOUT, (Integer i) -> i >= 0));
  private final Flux<Integer> idleCoarse = Flux.range(0, N)
      .transform(Breakwater.streamTimeouts(StreamTimeouts.builder().idle(TIMEOUT).coarse().build()));
  private final Flux<Integer> reactorTimeout = Flux.range(0, N).timeout(TIMEOUT);

  private static void drain(Flux<Integer> flux, Blackhole bh) {
    BaseSubscriber<Integer> subscriber = new BaseSubscriber<>() {
      @Override
      protected void hookOnSubscribe(Subscription subscription) {
        // request below, after subscribe returns
      }

      @Override
      protected void hookOnNext(Integer value) {
        bh.consume(value);
      }
    };
    flux.subscribe(subscriber);
    subscriber.request(Long.MAX_VALUE);
  }

  @Benchmark
  @OperationsPerInvocation(N)
  public void bare(Blackhole bh) {
    drain(bare, bh);
  }

  @Benchmark
  @OperationsPerInvocation(N)
  public void idleTimeout(Blackhole bh) {
    drain(idle, bh);
  }

  @Benchmark
  @OperationsPerInvocation(N)
  public void idleTimeoutWithProgressTest(Blackhole bh) {
    drain(idleWithProgressTest, bh);
  }

  /** The opt-in coarse tick: no clock read and no fence per element. */
  @Benchmark
  @OperationsPerInvocation(N)
  public void idleTimeoutCoarse(Blackhole bh) {
    drain(idleCoarse, bh);
  }

  @Benchmark
  @OperationsPerInvocation(N)
  public void reactorFluxTimeout(Blackhole bh) {
    drain(reactorTimeout, bh);
  }
}
