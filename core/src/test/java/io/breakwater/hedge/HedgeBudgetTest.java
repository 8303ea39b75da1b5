package io.breakwater.hedge;

import static io.breakwater.Breakwater.hedgedBy;
import static io.breakwater.hedge.HedgedByTest.DELAY;
import static io.breakwater.hedge.HedgedByTest.fill;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The hedge budget: hedges stay under their share of calls, also when every call is slow. */
class HedgeBudgetTest {

  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final VirtualTimeScheduler vts = VirtualTimeScheduler.getOrSet();
  final AtomicInteger attempts = new AtomicInteger();

  @AfterEach
  void resetTime() {
    VirtualTimeScheduler.reset();
  }

  double started() {
    return meters.counter("breakwater.hedge.started", "dependency", "search").count();
  }

  double refused() {
    return meters.counter("breakwater.hedge.budget.refusals", "dependency", "search").count();
  }

  /** Runs {@code calls} calls, one every 10 ms of virtual time, each attempt answering after {@code latency}. */
  void run(HedgePolicy policy, int calls, Function<Integer, Duration> latency) {
    run(policy, calls, Duration.ofMillis(10), latency);
  }

  void run(HedgePolicy policy, int calls, Duration spacing, Function<Integer, Duration> latency) {
    for (int i = 0; i < calls; i++) {
      int call = i;
      Mono.delay(spacing.multipliedBy(i))
          .then(Mono.defer(() -> {
            attempts.incrementAndGet();
            return Mono.delay(latency.apply(call)).thenReturn("ok");
          }).transformDeferred(hedgedBy(policy)))
          .subscribe();
    }
    vts.advanceTimeBy(spacing.multipliedBy(calls).plusMinutes(1));
  }

  @Test
  void duringAFullOutageHedgesStayUnderTheBudgetInsteadOfDoublingTheLoad() {
    HedgePolicy policy = HedgePolicy.builder().name("search").delay(DELAY).maxHedges(3).meterRegistry(meters).build();
    run(policy, 1000, call -> Duration.ofSeconds(30));
    assertThat(started()).as("hedges ≤ 10 % of 1000 calls").isLessThanOrEqualTo(100);
    assertThat(started()).as("and the budget was used").isGreaterThanOrEqualTo(99);
    assertThat(attempts).as("attempts ≤ 1.1 × calls").hasValueLessThanOrEqualTo(1100);
    assertThat(refused()).as("every other call was refused its hedge").isGreaterThanOrEqualTo(900);
  }

  @Test
  void anAdaptivePolicyHoldsItsBudgetWhenTheDependencyTurnsSlow() {
    HedgePolicy policy = HedgePolicy.builder().name("search").meterRegistry(meters).build();
    run(policy, 2000, call -> call < 500 ? Duration.ofMillis(100) : Duration.ofSeconds(20));
    assertThat(started()).as("hedges ≤ 10 % of 2000 calls").isLessThanOrEqualTo(200);
    assertThat(attempts).hasValueLessThanOrEqualTo(2200);
  }

  @Test
  void theBudgetStartsEmptySoTheFirstHedgeComesWithTheTenthCall() {
    HedgePolicy policy = HedgePolicy.builder().name("search").delay(DELAY).meterRegistry(meters).build();
    run(policy, 9, call -> Duration.ofSeconds(1));
    assertThat(started()).isZero();
    assertThat(refused()).isEqualTo(9);
    run(policy, 1, call -> Duration.ofSeconds(1));
    assertThat(started()).isEqualTo(1);
  }

  @Test
  void aQuietSpellSavesAtMostTenHedges() {
    HedgePolicy policy = HedgePolicy.builder().name("search").delay(DELAY).budget(0.5).meterRegistry(meters)
        .build();
    fill(policy, 1000);
    run(policy, 15, Duration.ZERO, call -> Duration.ofSeconds(30));   // a burst of slow calls, all at once
    assertThat(started()).isEqualTo(10);
    assertThat(refused()).isEqualTo(5);
  }
}
