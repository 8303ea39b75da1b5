package io.breakwater.retry;

import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.withRetryBudget;
import static io.breakwater.retry.RetryWithBudgetTest.VERIFY;
import static io.breakwater.retry.RetryWithBudgetTest.fixedPolicy;
import static io.breakwater.retry.RetryWithBudgetTest.status;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.internal.retry.TokenBucketRetryBudget;
import io.breakwater.retry.RetryWithBudgetTest.Calls;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

class RetryBudgetsTest {

  @Test
  void taskBudgetIsSharedByEveryCallInTheTask() {
    Calls first = Calls.failing(status(503));
    Calls second = Calls.failing(status(503));
    RetryPolicy policy = fixedPolicy().maxRetries(3).build();
    StepVerifier.withVirtualTime(() -> first.mono().transformDeferred(retryWithBudget(policy))
            .onErrorResume(e -> second.mono().transformDeferred(retryWithBudget(policy)))
            .transformDeferred(withRetryBudget(5)))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(10))
        .expectErrorSatisfies(e -> assertThat(((RetryExhaustedException) e).reason())
            .isEqualTo(RetryStopReason.TASK_BUDGET))
        .verify(VERIFY);
    // first: 1 + 3 retries; second: 1 + the 2 retries left of the task's 5
    assertThat(first.count).hasValue(4);
    assertThat(second.count).hasValue(3);
  }

  @Test
  void nestedTaskBudgetOnlyTightens() {
    Calls inner = Calls.failing(status(503));
    StepVerifier.withVirtualTime(() -> inner.mono().transformDeferred(retryWithBudget(fixedPolicy().build()))
            .transformDeferred(withRetryBudget(10))
            .transformDeferred(withRetryBudget(1)))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(1))
        .expectErrorSatisfies(e -> assertThat(((RetryExhaustedException) e).reason())
            .isEqualTo(RetryStopReason.TASK_BUDGET))
        .verify(VERIFY);
    assertThat(inner.count).hasValue(2);
  }

  @Test
  void taskBudgetStartsAtEachSubscription() {
    Calls calls = Calls.failing(status(503));
    Mono<String> task = calls.mono().transformDeferred(retryWithBudget(fixedPolicy().build()))
        .transformDeferred(withRetryBudget(1));
    for (int run = 1; run <= 2; run++) {
      StepVerifier.withVirtualTime(() -> task)
          .expectSubscription()
          .thenAwait(Duration.ofSeconds(1))
          .expectError(RetryExhaustedException.class)
          .verify(VERIFY);
      assertThat(calls.count).hasValue(2 * run);
    }
  }

  @Test
  void dependencyBudgetExhaustionStopsRetrying() {
    RetryBudget budget = new TokenBucketRetryBudget(0.0, 0.0, 2.0);
    RetryPolicy policy = fixedPolicy().maxRetries(5).budget(budget).build();
    Calls calls = Calls.failing(status(503));
    StepVerifier.withVirtualTime(() -> calls.mono().transformDeferred(retryWithBudget(policy)))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(1))
        .expectErrorSatisfies(e -> {
          RetryExhaustedException x = (RetryExhaustedException) e;
          assertThat(x.reason()).isEqualTo(RetryStopReason.DEPENDENCY_BUDGET);
          assertThat(x.attempts()).hasSize(3);
        })
        .verify(VERIFY);
    assertThat(calls.count).hasValue(3);
    assertThat(budget.level()).isZero();
  }

  @Test
  void refusedDependencyBudgetGivesTheTaskItsRetryBack() {
    RetryBudget empty = new TokenBucketRetryBudget(0.0, 0.0, 1.0);
    empty.tryAcquire(0).block();
    Calls calls = Calls.failing(status(503));
    StepVerifier.withVirtualTime(() -> calls.mono()
            .transformDeferred(retryWithBudget(fixedPolicy().budget(empty).build()))
            .then(Mono.deferContextual(ctx -> Mono.just(TaskRetryBudget.from(ctx).orElseThrow().remaining())))
            .onErrorResume(RetryExhaustedException.class,
                e -> Mono.deferContextual(ctx -> Mono.just(TaskRetryBudget.from(ctx).orElseThrow().remaining())))
            .transformDeferred(withRetryBudget(3)))
        .expectNext(3)
        .verifyComplete();
  }

  @Test
  void tokenBucketKeepsRetriesBelowTheRatioOfRequests() {
    TokenBucketRetryBudget budget = new TokenBucketRetryBudget(0.1, 0.0, 10.0);
    for (int i = 0; i < 10; i++) {
      assertThat(budget.tryAcquireNow(0)).isTrue();   // starts full
    }
    assertThat(budget.tryAcquireNow(0)).isFalse();
    int granted = 0;
    for (int request = 0; request < 1_000; request++) {
      budget.onRequest();
      if (budget.tryAcquireNow(0)) {
        granted++;
      }
    }
    assertThat(granted).isEqualTo(100);
  }

  @Test
  void tokenBucketFloorAccruesWithTheCallersClock() {
    TokenBucketRetryBudget budget = new TokenBucketRetryBudget(0.0, 2.0, 10.0);
    while (budget.tryAcquireNow(1_000)) {
      // drain
    }
    assertThat(budget.tryAcquireNow(1_400)).as("0.8 tokens after 400 ms").isFalse();
    assertThat(budget.tryAcquireNow(1_500)).as("1 token after 500 ms at 2/s").isTrue();
    assertThat(budget.tryAcquireNow(1_500)).isFalse();
    assertThat(budget.tryAcquireNow(100_000)).isTrue();
    assertThat(budget.level()).as("the floor fills at most to capacity").isEqualTo(9.0);
  }

  @Test
  void tokenBucketNeverGrantsMoreThanItHoldsUnderRaces() throws InterruptedException {
    for (int round = 0; round < 50; round++) {
      TokenBucketRetryBudget budget = new TokenBucketRetryBudget(0.0, 0.0, 100.0);
      AtomicInteger granted = new AtomicInteger();
      CountDownLatch done = new CountDownLatch(2);
      Runnable racer = () -> {
        for (int i = 0; i < 100; i++) {
          budget.onRequest();
          if (budget.tryAcquireNow(0)) {
            granted.incrementAndGet();
          }
        }
        done.countDown();
      };
      Schedulers.parallel().schedule(racer);
      Schedulers.parallel().schedule(racer);
      done.await();
      assertThat(granted).as("round %d", round).hasValue(100);
    }
  }

  @Test
  void budgetValidationSaysWhatToChange() {
    org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
        .isThrownBy(() -> RetryBudget.ratio(1.5, 10))
        .withMessageContaining("from 0 to 1");
    org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
        .isThrownBy(() -> RetryBudget.ratio(0.1, -1))
        .withMessageContaining("zero or a positive number of retries per second");
  }

  @Test
  void metricsCountRetriesRejectionsAndReportTheBudgetLevel() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RetryBudget budget = new TokenBucketRetryBudget(0.0, 0.0, 2.0);
    RetryPolicy policy = fixedPolicy().name("flights").maxRetries(5).budget(budget).meterRegistry(registry).build();
    Calls calls = Calls.failing(status(503));
    StepVerifier.withVirtualTime(() -> calls.mono().transformDeferred(retryWithBudget(policy)))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(1))
        .expectError(RetryExhaustedException.class)
        .verify(VERIFY);
    assertThat(registry.get("breakwater.retry.retries").tag("dependency", "flights").tag("reason", "server_error")
        .counter().count()).isEqualTo(2.0);
    assertThat(registry.get("breakwater.retry.rejections").tag("dependency", "flights")
        .tag("reason", "dependency_budget").counter().count()).isEqualTo(1.0);
    assertThat(registry.get("breakwater.retry.budget.level").tag("dependency", "flights").gauge().value())
        .isZero();
  }

  @Test
  void policiesOfOneDependencyShareItsDefaultBudget() {
    RetryPolicy a = RetryPolicy.builder().name("hotels").build();
    RetryPolicy b = RetryPolicy.builder().name("hotels").maxRetries(1).build();
    RetryPolicy other = a.toBuilder().name("cars").build();
    RetryBudget explicit = RetryBudget.unlimited();
    assertThat(b.budget()).isSameAs(a.budget());
    assertThat(other.budget()).as("renaming picks the new name's budget").isNotSameAs(a.budget());
    assertThat(a.toBuilder().budget(explicit).build().toBuilder().name("x").build().budget()).isSameAs(explicit);
  }
}
