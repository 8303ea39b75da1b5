package io.breakwater.retry;

import static io.breakwater.Breakwater.retryWithBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.retry.RetryWithBudgetTest.Calls;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * A thundering herd: 50 callers get a 503 at the same instant, three times over, then succeed. Reports the largest
 * number of retries that start within any 100 ms window.
 */
class HerdTest {

  private static final int CALLERS = 50;
  private static final long SEED = 42L;

  private static int busiestWindow(Backoff backoff) {
    SplittableRandom random = new SplittableRandom(SEED);
    RetryPolicy policy = RetryPolicy.builder().name("herd").backoff(backoff).timeoutBase(Duration.ZERO)
        .budget(RetryBudget.unlimited()).random(() -> random).build();
    List<Calls> callers = new ArrayList<>();
    for (int i = 0; i < CALLERS; i++) {
      callers.add(new Calls(RetryWithBudgetTest.status(503), RetryWithBudgetTest.status(503),
          RetryWithBudgetTest.status(503)));
    }
    StepVerifier.withVirtualTime(() -> Flux.fromIterable(callers)
            .flatMap(c -> c.mono().transformDeferred(retryWithBudget(policy)))
            .then(Mono.fromCallable(() -> Schedulers.parallel().now(TimeUnit.MILLISECONDS))))
        .expectSubscription()
        .thenAwait(Duration.ofMinutes(1))
        .expectNextCount(1)
        .verifyComplete();
    List<Long> retries = new ArrayList<>();
    for (Calls c : callers) {
      assertThat(c.startedAtMillis).hasSize(4);
      retries.addAll(c.startedAtMillis.subList(1, 4));
    }
    Collections.sort(retries);
    int busiest = 0;
    for (int i = 0, j = 0; i < retries.size(); i++) {
      while (retries.get(i) - retries.get(j) >= 100) {
        j++;
      }
      busiest = Math.max(busiest, i - j + 1);
    }
    return busiest;
  }

  @Test
  void fullJitterSpreadsAHerdThatFixedDelaysKeepInLockstep() {
    int fixed = busiestWindow(Backoff.fixed(Duration.ofMillis(500)));
    int fullJitter = busiestWindow(Backoff.fullJitter(Duration.ofMillis(500), Duration.ofSeconds(10)));
    int decorrelated = busiestWindow(Backoff.decorrelatedJitter(Duration.ofMillis(500), Duration.ofSeconds(10)));
    System.out.printf("herd of %d callers, most retries in any 100 ms window: fixed(500ms) %d, "
        + "fullJitter(500ms, 10s) %d, decorrelatedJitter(500ms, 10s) %d (seed %d)%n",
        CALLERS, fixed, fullJitter, decorrelated, SEED);
    assertThat(fixed).as("fixed delays retry in lockstep").isEqualTo(CALLERS);
    // The first retries of full jitter are uniform over 500 ms: about 10 per 100 ms, with clusters of twice that.
    assertThat(fullJitter).as("full jitter spreads them (seed %d)", SEED).isLessThanOrEqualTo(CALLERS / 2);
    assertThat(decorrelated).as("decorrelated jitter spreads them (seed %d)", SEED).isLessThanOrEqualTo(CALLERS / 2);
  }
}
