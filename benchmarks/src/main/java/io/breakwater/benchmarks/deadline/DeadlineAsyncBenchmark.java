package io.breakwater.benchmarks.deadline;

import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.withDeadline;

import io.breakwater.benchmarks.AsyncCallBenchmark;
import io.breakwater.benchmarks.AsyncCalls;
import io.github.resilience4j.reactor.timelimiter.TimeLimiterOperator;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import java.time.Duration;
import org.openjdk.jmh.annotations.Param;
import reactor.core.publisher.Mono;

/**
 * {@code withDeadline} and {@code perCallTimeout} on asynchronous calls (P3b): each call answers after subscription,
 * with 1 and 10 000 calls in flight, so every deadline arms a timer and cancels it when the call answers. Peers in the
 * same run: no operator, Reactor's {@code timeout(Duration)}, Resilience4j's {@code TimeLimiterOperator}. One
 * operation answers the oldest call and subscribes a new one (see {@link AsyncCalls}).
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar DeadlineAsyncBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -prof gc
 * </pre>
 */
public class DeadlineAsyncBenchmark extends AsyncCallBenchmark {

  @Param({"1", "10000"})
  public int inFlight;

  @Override
  protected int inFlight() {
    return inFlight;
  }

  @Param({"baseline", "deadline", "perCallTimeout", "deadlineAndPerCallTimeout", "reactorTimeout",
      "resilience4jTimeLimiter"})
  public String variant;

  @Override
  protected Mono<Integer> call(Mono<Integer> bare) {
    return switch (variant) {
      case "baseline" -> bare;
      case "deadline" -> bare.transform(withDeadline(Duration.ofSeconds(5)));
      case "perCallTimeout" -> bare.transform(perCallTimeout(Duration.ofSeconds(5)));
      case "deadlineAndPerCallTimeout" -> bare.transform(perCallTimeout()).transform(withDeadline(Duration.ofSeconds(10)));
      case "reactorTimeout" -> bare.timeout(Duration.ofSeconds(5));
      case "resilience4jTimeLimiter" -> bare.transform(TimeLimiterOperator.of(TimeLimiter.of("bench",
          TimeLimiterConfig.custom().timeoutDuration(Duration.ofSeconds(5)).build())));
      default -> throw new IllegalArgumentException("unknown variant " + variant);
    };
  }
}
