package io.breakwater.examples.guide;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.examples.guide.Domain.Flights;
import io.breakwater.examples.guide.Domain.Offers;
import io.breakwater.examples.guide.Domain.Query;
import io.breakwater.hedge.HedgePolicy;
import io.breakwater.retry.RetryPolicy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class HedgingTest {

  private static final Duration VERIFY = Duration.ofSeconds(5);
  private static final RetryPolicy RETRY = RetryPolicy.builder().name("flights").build();
  private final Query query = new Query("LYS", "LIS", "2026-12-24");
  private final Offers fast = new Offers(List.of("BW123"));

  /** Twenty quick searches: enough answers for the p95, and budget for two hedges. */
  private static void warmUp(HedgePolicy hedge, Flights flights, Query query) {
    for (int i = 0; i < 20; i++) {
      StepVerifier.withVirtualTime(() -> Hedging.search(flights, hedge, RETRY, query))
          .thenAwait(Duration.ofMillis(100))
          .expectNextCount(1)
          .expectComplete()
          .verify(VERIFY);
    }
  }

  @Test
  void aSlowSearchIsHedgedAtTheP95OfRecentAnswersAndTheFasterAttemptWins() {
    HedgePolicy hedge = Hedging.policy();
    warmUp(hedge, q -> Mono.delay(Duration.ofMillis(100)).thenReturn(fast), query);
    AtomicInteger calls = new AtomicInteger();
    Flights sometimesSlow = q -> Mono.defer(() -> Mono.delay(calls.getAndIncrement() == 0
        ? Duration.ofSeconds(5) : Duration.ofMillis(100)).thenReturn(fast));

    StepVerifier.withVirtualTime(() -> Hedging.search(sometimesSlow, hedge, RETRY, query))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(200))
        .thenAwait(Duration.ofMillis(1))          // the p95 of 100 ms answers, in HdrHistogram's buckets: 100.35 ms
        .expectNext(fast)
        .expectComplete()
        .verify(VERIFY);
    assertThat(calls).hasValue(2);
  }

  @Test
  void theHedgeGoesToTheOtherRegion() {
    HedgePolicy hedge = Hedging.fixedPolicy();
    for (int i = 0; i < 10; i++) {      // the budget starts empty: ten calls earn one hedge
      Hedging.searchTwoRegions(q -> Mono.just(fast), q -> Mono.just(fast), hedge, query).block();
    }
    Offers eu = new Offers(List.of("EU456"));
    StepVerifier.withVirtualTime(() -> Hedging.searchTwoRegions(q -> Mono.never(),
            q -> Mono.delay(Duration.ofMillis(50)).thenReturn(eu), hedge, query))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(350))
        .expectNext(eu)
        .expectComplete()
        .verify(VERIFY);
  }
}
