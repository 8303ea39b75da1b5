package io.breakwater.benchmarks.stream;

import io.breakwater.Breakwater;
import io.breakwater.benchmarks.AsyncCallBenchmark;
import io.breakwater.benchmarks.AsyncCalls;
import io.breakwater.stream.StreamTimeouts;
import java.time.Duration;
import org.openjdk.jmh.annotations.Param;
import reactor.core.publisher.Mono;

/**
 * Stream timeouts on asynchronous calls: a call that answers after subscription, with 1 and 10 000 in flight, under
 * {@code idleTimeout} and under first-item + idle {@code streamTimeouts}, against no operator and Reactor's
 * {@code timeout(Duration)}. Each call arms its timer at subscription and cancels it when it answers: this is what a
 * stream timeout costs a short LLM or tool stream, where {@link IdleTimeoutBenchmark} measures its cost per element
 * of a long one. One operation answers the oldest call and subscribes a new one (see {@link AsyncCalls}).
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar StreamTimeoutsAsyncBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -prof gc
 * </pre>
 */
public class StreamTimeoutsAsyncBenchmark extends AsyncCallBenchmark {

  @Param({"1", "10000"})
  public int inFlight;

  @Override
  protected int inFlight() {
    return inFlight;
  }

  @Param({"baseline", "idleTimeout", "firstItemAndIdle", "reactorTimeout"})
  public String variant;

  @Override
  protected Mono<Integer> call(Mono<Integer> bare) {
    return switch (variant) {
      case "baseline" -> bare;
      case "idleTimeout" -> bare.transform(Breakwater.idleTimeout(Duration.ofSeconds(5)));
      case "firstItemAndIdle" -> bare.transform(Breakwater.streamTimeouts(StreamTimeouts.builder()
          .firstItem(Duration.ofSeconds(10)).idle(Duration.ofSeconds(5)).build()));
      case "reactorTimeout" -> bare.timeout(Duration.ofSeconds(5));
      default -> throw new IllegalArgumentException("unknown variant " + variant);
    };
  }
}
