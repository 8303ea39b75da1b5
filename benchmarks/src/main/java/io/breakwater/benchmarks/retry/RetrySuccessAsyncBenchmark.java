package io.breakwater.benchmarks.retry;

import io.breakwater.Breakwater;
import io.breakwater.benchmarks.AsyncCallBenchmark;
import io.breakwater.benchmarks.AsyncCalls;
import io.breakwater.retry.RetryPolicy;
import io.github.resilience4j.reactor.retry.RetryOperator;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import java.time.Duration;
import org.openjdk.jmh.annotations.Param;
import reactor.core.publisher.Mono;

/**
 * Success-path overhead of {@code retryWithBudget} on asynchronous calls (P2), with 1 and 10 000 calls in flight,
 * against no operator, Reactor's {@code retryWhen(Retry.backoff(3, 100 ms))} and Resilience4j's {@code RetryOperator}.
 * One operation answers the oldest call and subscribes a new one (see {@link AsyncCalls}).
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar RetrySuccessAsyncBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -prof gc
 * </pre>
 */
public class RetrySuccessAsyncBenchmark extends AsyncCallBenchmark {

  @Param({"1", "10000"})
  public int inFlight;

  @Override
  protected int inFlight() {
    return inFlight;
  }

  @Param({"baseline", "breakwaterRetryWithBudget", "reactorRetryWhenBackoff", "resilience4jRetryOperator"})
  public String variant;

  @Override
  protected Mono<Integer> call(Mono<Integer> bare) {
    return switch (variant) {
      case "baseline" -> bare;
      case "breakwaterRetryWithBudget" -> bare.transform(Breakwater.retryWithBudget(RetryPolicy.builder()
          .name("bench").build()));
      case "reactorRetryWhenBackoff" -> bare.retryWhen(reactor.util.retry.Retry.backoff(3, Duration.ofMillis(100)));
      case "resilience4jRetryOperator" -> bare.transform(RetryOperator.of(Retry.of("bench", RetryConfig.custom()
          .maxAttempts(4).waitDuration(Duration.ofMillis(100)).build())));
      default -> throw new IllegalArgumentException("unknown variant " + variant);
    };
  }
}
