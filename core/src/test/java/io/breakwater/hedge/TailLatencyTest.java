package io.breakwater.hedge;

import static io.breakwater.Breakwater.hedgedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The scenario in virtual time: a dependency whose attempts take 100 ms 95 % of the time and 10 s otherwise.
 * Without hedging its p99 is 10 s; with a p95 hedge it is about 200 ms (the delay, then a fast attempt), with hedges
 * for about 5 % of calls.
 */
class TailLatencyTest {

  static final int CALLS = 4000;

  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final VirtualTimeScheduler vts = VirtualTimeScheduler.getOrSet();

  @AfterEach
  void resetTime() {
    VirtualTimeScheduler.reset();
  }

  /** The latency of each of {@link #CALLS} calls, one every 20 ms, each attempt drawing its own latency. */
  long[] latenciesMillis(Function<Mono<String>, Mono<String>> operator) {
    Random random = new Random(23);
    Mono<String> dependency = Mono.defer(() -> Mono.delay(random.nextDouble() < 0.05
        ? Duration.ofSeconds(10) : Duration.ofMillis(100)).thenReturn("ok"));
    long[] latencies = new long[CALLS];
    for (int i = 0; i < CALLS; i++) {
      int call = i;
      Mono.delay(Duration.ofMillis(20L * i))
          .then(Mono.defer(() -> {
            long start = vts.now(TimeUnit.MILLISECONDS);
            return operator.apply(dependency)
                .doOnSuccess(v -> latencies[call] = vts.now(TimeUnit.MILLISECONDS) - start);
          }))
          .subscribe();
    }
    vts.advanceTimeBy(Duration.ofMillis(20L * CALLS).plusMinutes(1));
    return latencies;
  }

  static long percentile(long[] values, double p) {
    long[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[(int) Math.ceil(p / 100 * sorted.length) - 1];
  }

  @Test
  void ap95HedgeCutsTheP99FromTenSecondsToAboutTwoHundredMillisWithFewHedges() {
    long[] bare = latenciesMillis(call -> call);
    assertThat(percentile(bare, 99)).as("p99 without hedging").isEqualTo(10_000);

    HedgePolicy p95 = HedgePolicy.builder().name("search").meterRegistry(meters).build();
    long[] hedged = latenciesMillis(call -> call.transformDeferred(hedgedBy(p95)));
    assertThat(percentile(hedged, 50)).isEqualTo(100);
    assertThat(percentile(hedged, 99)).as("p99 with a p95 hedge").isBetween(200L, 201L);
    double hedges = meters.counter("breakwater.hedge.started", "dependency", "search").count();
    System.out.printf(java.util.Locale.ROOT, "TailLatencyTest: %d calls; without hedging p50 %d ms, p99 %d ms;"
            + " with a p95 hedge p50 %d ms, p99 %d ms, max %d ms, hedges %.1f %% of calls%n", CALLS,
        percentile(bare, 50), percentile(bare, 99), percentile(hedged, 50), percentile(hedged, 99),
        percentile(hedged, 100), 100 * hedges / CALLS);
    assertThat(hedges / CALLS).as("hedges per call").isLessThanOrEqualTo(0.10).isGreaterThan(0.03);
    assertThat(p95.currentDelay()).hasValueSatisfying(d ->
        assertThat(d).isBetween(Duration.ofMillis(100), Duration.ofMillis(101)));
  }

  @Test
  void anAdaptivePolicyTimesItsFirstTwentyAnswersBeforeItHedges() {
    HedgePolicy p95 = HedgePolicy.builder().name("search").meterRegistry(meters).build();
    for (int i = 0; i < HedgePolicy.WARM_UP_SAMPLES - 1; i++) {
      Mono.delay(Duration.ofMillis(100)).thenReturn("ok").transformDeferred(hedgedBy(p95)).subscribe();
      vts.advanceTimeBy(Duration.ofMillis(100));
    }
    assertThat(p95.currentDelay()).as("19 answers known: still warming up").isEmpty();
    Mono.delay(Duration.ofMillis(100)).thenReturn("ok").transformDeferred(hedgedBy(p95)).subscribe();
    vts.advanceTimeBy(Duration.ofMillis(100));
    assertThat(p95.currentDelay()).hasValueSatisfying(d ->
        assertThat(d).isBetween(Duration.ofMillis(100), Duration.ofMillis(101)));
    assertThat(meters.counter("breakwater.hedge.started", "dependency", "search").count()).isZero();
  }
}
