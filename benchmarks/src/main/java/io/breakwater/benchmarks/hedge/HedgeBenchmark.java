package io.breakwater.benchmarks.hedge;

import static io.breakwater.Breakwater.hedgedBy;
import static io.breakwater.Breakwater.withDeadline;

import io.breakwater.benchmarks.BlackholeSubscriber;
import io.breakwater.hedge.HedgePolicy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * P11: {@code hedgedBy} on a call that answers before the hedge delay, against {@code withDeadline} and no operator,
 * in the same run. The call is asynchronous: a {@code Sinks.One} that the benchmark completes after subscribing, with
 * {@code inFlight} calls outstanding (each operation completes the oldest call and starts a new one), so both
 * operators arm a real timer (5 s: it never fires) and dispose it when the call answers.
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar HedgeBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HedgeBenchmark {

  @Param({"1", "1000"})
  public int inFlight;

  @Param({"baseline", "withDeadline", "hedgedBy"})
  public String variant;

  private Function<Publisher<Integer>, Publisher<Integer>> operator;
  private Sinks.One<Integer>[] calls;
  private int next;
  private BlackholeSubscriber<Integer> subscriber;

  @Setup
  @SuppressWarnings("unchecked")
  public void setUp(Blackhole blackhole) {
    subscriber = new BlackholeSubscriber<>(blackhole);
    operator = switch (variant) {
      case "baseline" -> Function.identity();
      case "withDeadline" -> withDeadline(Duration.ofSeconds(5));
      case "hedgedBy" -> hedgedBy(HedgePolicy.builder().name("bench").delay(Duration.ofSeconds(5))
          .meterRegistry(new SimpleMeterRegistry()).build());
      default -> throw new IllegalArgumentException(variant);
    };
    calls = new Sinks.One[inFlight];
    for (int i = 0; i < inFlight; i++) {
      calls[i] = start();
    }
  }

  @TearDown
  public void tearDown() {
    for (Sinks.One<Integer> call : calls) {
      call.tryEmitValue(0);
    }
  }

  private Sinks.One<Integer> start() {
    Sinks.One<Integer> sink = Sinks.one();
    sink.asMono().transformDeferred(operator).subscribe(subscriber);
    return sink;
  }

  /** Completes the oldest call in flight and starts a new one. */
  @Benchmark
  public void call() {
    int i = next;
    next = i + 1 == inFlight ? 0 : i + 1;
    calls[i].tryEmitValue(42);
    calls[i] = start();
  }
}
