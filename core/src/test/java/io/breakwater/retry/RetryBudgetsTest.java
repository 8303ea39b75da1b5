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
import io.breakwater.failure.HttpStatusException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

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

  /** A ratio budget earns its retries from the calls: each call through {@code retryWithBudget} deposits its share. */
  @Test
  void everyCallThroughRetryWithBudgetDepositsItsShareInTheDependencyBudget() {
    TokenBucketRetryBudget budget = new TokenBucketRetryBudget(0.1, 0.0, 10.0);
    for (int i = 0; i < 10; i++) {
      budget.tryAcquireNow(0);
    }
    assertThat(budget.level()).as("drained").isZero();
    RetryPolicy policy = fixedPolicy().budget(budget).build();
    StepVerifier.create(Flux.range(0, 20).concatMap(i -> Mono.just(i).transformDeferred(retryWithBudget(policy))))
        .expectNextCount(20)
        .verifyComplete();
    assertThat(budget.level()).as("20 calls at 0.1 retry each").isEqualTo(2.0);
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

  /** Issue 19.5: a second budget under a name follows the last-built policy, as the breaker gauges do. */
  @Test
  void theBudgetGaugeFollowsTheLastBuiltBudgetOfAName() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RetryBudget drained = new TokenBucketRetryBudget(0.0, 0.0, 2.0);
    drained.tryAcquire(0).block();
    drained.tryAcquire(0).block();
    RetryPolicy.builder().name("flights").budget(drained).meterRegistry(registry).build();
    assertThat(registry.get("breakwater.retry.budget.level").tag("dependency", "flights").gauge().value()).isZero();

    RetryBudget full = new TokenBucketRetryBudget(0.0, 0.0, 3.0);
    RetryPolicy.builder().name("flights").budget(full).meterRegistry(registry).build();
    assertThat(registry.find("breakwater.retry.budget.level").tag("dependency", "flights").gauges())
        .singleElement().satisfies(g -> assertThat(g.value()).as("the last-built budget's level").isEqualTo(3.0));

    var gauge = registry.get("breakwater.retry.budget.level").tag("dependency", "flights").gauge();
    RetryPolicy.builder().name("flights").maxRetries(1).budget(full).meterRegistry(registry).build();
    assertThat(registry.get("breakwater.retry.budget.level").tag("dependency", "flights").gauge())
        .as("a policy sharing the reported budget keeps its gauge").isSameAs(gauge);
  }

  /** Issue 35: a budget belongs to the dependency, per scheduler; a given one is used as it is. */
  @Test
  void policiesOfOneNameShareTheDependencysBudgetOnOneSchedulerAndAGivenBudgetIsKept() {
    VirtualTimeScheduler one = VirtualTimeScheduler.create();
    VirtualTimeScheduler other = VirtualTimeScheduler.create();
    RetryPolicy a = RetryPolicy.builder().name("hotels").build();
    RetryPolicy b = RetryPolicy.builder().name("hotels").maxRetries(1).build();
    assertThat(a.budget()).as("no budget given").isEmpty();
    assertThat(b.budget(one)).as("same name, same scheduler: one budget").isSameAs(a.budget(one));
    assertThat(b.budget(other)).as("another scheduler (another test's virtual clock): another budget")
        .isNotSameAs(a.budget(one));
    assertThat(RetryPolicy.builder().name("cars").build().budget(one)).as("another dependency")
        .isNotSameAs(a.budget(one));
    RetryBudget shared = RetryBudget.ofDefaults();
    RetryPolicy search = RetryPolicy.builder().name("hotels").budget(shared).build();
    RetryPolicy book = RetryPolicy.builder().name("hotels").maxRetries(1).budget(shared).build();
    assertThat(book.budget(one)).isSameAs(search.budget(other)).isSameAs(shared);
    assertThat(search.toBuilder().name("x").build().budget()).as("toBuilder keeps a given budget").contains(shared);
  }

  /**
   * Issue 21: any finite floor is valid, and a huge one makes the accrual of a millisecond saturate at
   * {@code Long.MAX_VALUE} milli-tokens; added bare to the balance it wrapped around to a negative one, refusing the
   * very retries the floor grants.
   */
  @Test
  void aHugeFloorFillsTheBucketInsteadOfWrappingItsBalance() {
    TokenBucketRetryBudget bucket = new TokenBucketRetryBudget(0.0, Double.MAX_VALUE, 2.0);
    assertThat(bucket.tryAcquireNow(0)).isTrue();
    assertThat(bucket.tryAcquireNow(1)).as("a millisecond at an unbounded floor refills the bucket").isTrue();
    assertThat(bucket.tryAcquireNow(2)).isTrue();
    assertThat(bucket.level()).isEqualTo(1.0);
  }

  /** A floor above 1/s holds ten seconds of it and starts full; below that, 10 tokens. */
  @Test
  void aFloorAboveOnePerSecondHoldsTenSecondsOfItAndStartsFull() {
    RetryBudget fivePerSecond = RetryBudget.ratio(0.1, 5);
    assertThat(fivePerSecond.level()).isEqualTo(50.0);
    for (int i = 0; i < 50; i++) {
      assertThat(fivePerSecond.tryAcquire(0).block()).as("retry %d of the 50 it holds", i + 1).isTrue();
    }
    assertThat(fivePerSecond.tryAcquire(0).block()).isFalse();
    assertThat(RetryBudget.ratio(0.1, 0.5).level()).as("a slow floor still holds 10").isEqualTo(10.0);
    assertThat(RetryBudget.ratio(0.1, 1).level()).isEqualTo(10.0);
  }

  /** Issue 17: a new virtual clock starts at 0; the bucket must not stay frozen until it catches up. */
  @Test
  void aClockThatJumpsBackwardsStartsAFreshEpoch() {
    TokenBucketRetryBudget bucket = new TokenBucketRetryBudget(0, 1, 3);
    for (int i = 0; i < 3; i++) {
      assertThat(bucket.tryAcquireNow(3_600_000)).isTrue();
    }
    assertThat(bucket.tryAcquireNow(3_600_000)).isFalse();
    assertThat(bucket.tryAcquireNow(0)).as("another clock: a fresh, full bucket").isTrue();
    assertThat(bucket.tryAcquireNow(1_000)).as("the new epoch accrues from its own start").isTrue();
  }

  /**
   * Issue 17: the same 200-trial test, run three times in one JVM, gives identical results: every trial builds its
   * pipeline in its own virtual time, with a policy that has no explicit budget.
   */
  @Test
  void theSameTwoHundredTrialJitterTestGivesIdenticalResultsThreeTimesInOneJvm() {
    List<List<Long>> runs = new ArrayList<>();
    for (int run = 0; run < 3; run++) {
      runs.add(twoHundredJitterTrials());
    }
    assertThat(runs.get(0)).hasSize(200 * 5).doesNotContain(-1L);
    assertThat(runs.get(1)).isEqualTo(runs.get(0));
    assertThat(runs.get(2)).isEqualTo(runs.get(0));
  }

  /** 200 trials of a call that fails 4 times, then answers, with 4 retries and full jitter: each attempt's start. */
  private static List<Long> twoHundredJitterTrials() {
    RetryPolicy policy = RetryPolicy.builder().name("jitter").maxRetries(4)
        .backoff(Backoff.fullJitter(Duration.ofMillis(100), Duration.ofSeconds(2)))
        .random(() -> new SplittableRandom(42)).meterRegistry(new SimpleMeterRegistry()).build();
    List<Long> starts = new ArrayList<>();
    for (int trial = 0; trial < 200; trial++) {
      Calls calls = new Calls(status(503), status(503), status(503), status(503));
      StepVerifier.withVirtualTime(() -> calls.mono().transformDeferred(retryWithBudget(policy)))
          .thenAwait(Duration.ofMinutes(1))
          .expectNext("ok")
          .verifyComplete();
      starts.addAll(calls.startedAtMillis);
      for (int missing = calls.startedAtMillis.size(); missing < 5; missing++) {
        starts.add(-1L);
      }
    }
    return starts;
  }

  /**
   * Issue 17: with the default budget, a full outage of 10 minutes leaves retries under 15 % of requests at 1, 20 and
   * 200 calls/s (each call asks for up to 3 retries), measured through {@code retryWithBudget} in virtual time.
   */
  @Test
  void inATenMinuteOutageRetriesStayUnderFifteenPercentOfRequestsAtAnyRate() {
    for (int rate : new int[] {1, 20, 200}) {
      double share = outageRetryShare(rate);
      System.out.printf("RetryBudgetsTest: 10-minute outage at %d calls/s: %.1f %% of requests are retries%n", rate,
          100 * share);
      assertThat(share).as("retry share at %d calls/s", rate).isLessThan(0.15);
    }
  }

  /** Retries ÷ (calls + retries) when every call fails, {@code rate} calls a second for 10 minutes. */
  static double outageRetryShare(int rate) {
    RetryPolicy policy = RetryPolicy.builder().name("outage").meterRegistry(new SimpleMeterRegistry())
        .random(() -> new SplittableRandom(7)).build();
    AtomicLong attempts = new AtomicLong();
    long calls = 600L * rate;
    VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    Mono<String> failing = Mono.defer(() -> {
      attempts.incrementAndGet();
      return Mono.<String>error(new HttpStatusException(503));
    });
    RetryPolicy timed = policy.toBuilder().scheduler(() -> vts).build();
    Flux.interval(Duration.ZERO, Duration.ofNanos(1_000_000_000L / rate), vts).take(calls)
        .flatMap(i -> failing.transformDeferred(retryWithBudget(timed)).onErrorResume(e -> Mono.empty()),
            Integer.MAX_VALUE)
        .subscribe();
    vts.advanceTimeBy(Duration.ofMinutes(11));
    long retries = attempts.get() - calls;
    return retries / (double) attempts.get();
  }

  /** Issue 17: a lone failure among healthy calls, at 1 call a minute, still gets every retry it asks for. */
  @Test
  void aLoneFailingCallAmongHealthyOnesAtOneCallAMinuteGetsAllItsRetries() {
    RetryPolicy policy = RetryPolicy.builder().name("lone").backoff(Backoff.fixed(Duration.ofSeconds(1)))
        .meterRegistry(new SimpleMeterRegistry()).build();
    Calls lone = new Calls(status(503), status(503), status(503));
    StepVerifier.withVirtualTime(() -> Flux.range(0, 60)
            .concatMap(minute -> Mono.delay(Duration.ofMinutes(1)).then(Mono.just("ok")
                .transformDeferred(retryWithBudget(policy))))
            .then(lone.mono().transformDeferred(retryWithBudget(policy))))
        .thenAwait(Duration.ofHours(2))
        .expectNext("ok")
        .verifyComplete();
    assertThat(lone.count).as("the first attempt and its 3 retries").hasValue(4);
  }

  /** Issue 17: a refill-on-success budget (the seeds': 50 tokens, 5 per retry, +1 per success) can be written. */
  @Test
  void aRefillOnSuccessBudgetCanBeWrittenWithTheOnSuccessHook() {
    class RefillOnSuccess implements RetryBudget {
      final AtomicInteger tokens = new AtomicInteger(50);

      @Override
      public void onRequest() {}

      @Override
      public void onSuccess() {
        tokens.updateAndGet(t -> Math.min(50, t + 1));
      }

      @Override
      public Mono<Boolean> tryAcquire(long nowMillis) {
        return Mono.just(tokens.getAndUpdate(t -> t >= 5 ? t - 5 : t) >= 5);
      }

      @Override
      public double level() {
        return tokens.get();
      }
    }
    RefillOnSuccess seeds = new RefillOnSuccess();
    RetryPolicy policy = fixedPolicy().budget(seeds).build();
    StepVerifier.withVirtualTime(() -> new Calls(status(503), status(503)).mono()
            .transformDeferred(retryWithBudget(policy)))
        .thenAwait(Duration.ofSeconds(1))
        .expectNext("ok")
        .verifyComplete();
    assertThat(seeds.tokens).as("2 retries at 5, then +1 for the success").hasValue(41);
    for (int i = 0; i < 20; i++) {
      Mono.just("ok").transformDeferred(retryWithBudget(policy)).block();
      Flux.just("a", "b").transformDeferred(retryWithBudget(policy)).blockLast();
    }
    assertThat(seeds.tokens).as("refilled by successes, Mono and Flux, up to its capacity").hasValue(50);
  }

  /** Issue 19: when the budget starts refusing, the refusal is a meter, and the first one a warning. */
  @Test
  void aBudgetThatStartsRefusingIsCountedAndLoggedOnce() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RetryPolicy policy = fixedPolicy().name("refusing").budget(new TokenBucketRetryBudget(0, 0, 1))
        .meterRegistry(registry).build();
    java.io.PrintStream err = System.err;
    java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
    System.setErr(new java.io.PrintStream(captured, true));
    try {
      for (int i = 0; i < 3; i++) {
        StepVerifier.withVirtualTime(() -> Calls.failing(status(503)).mono()
                .transformDeferred(retryWithBudget(policy)))
            .thenAwait(Duration.ofSeconds(10))
            .expectError()
            .verify(VERIFY);
      }
    } finally {
      System.setErr(err);
    }
    assertThat(registry.get("breakwater.retry.rejections").tag("dependency", "refusing")
        .tag("reason", "dependency_budget").counter().count()).isEqualTo(3);
    String log = captured.toString();
    assertThat(log).contains("Retry budget of 'refusing'").contains("started refusing retries");
    assertThat(log.indexOf("started refusing")).isEqualTo(log.lastIndexOf("started refusing"));
  }
}
