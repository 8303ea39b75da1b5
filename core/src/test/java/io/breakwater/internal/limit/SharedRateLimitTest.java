package io.breakwater.internal.limit;

import static io.breakwater.Breakwater.throttledBy;
import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.TaskBudget;
import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.internal.ContextKeys;
import io.breakwater.limit.CallWeight;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.LimitExceededException.Reason;
import io.breakwater.limit.ProviderRateLimits;
import io.breakwater.limit.RateLimit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.publisher.TestPublisher;
import reactor.test.scheduler.VirtualTimeScheduler;

class SharedRateLimitTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
  private final RateSettings settings = new RateSettings("openai", 60, Duration.ofMinutes(1), 6_000,
      Duration.ofMinutes(1), ProviderRateLimits.all(), Duration.ofSeconds(50), 1000, () -> clock);
  private final FakeBucketStore store = new FakeBucketStore(clock, settings);

  @AfterEach
  void stop() {
    clock.dispose();
  }

  private RateLimit instance(boolean failOpen) {
    return RateEngine.shared(settings, new SharedSettings(Duration.ofMillis(500), Duration.ofSeconds(3),
        Duration.ofMillis(50), failOpen), store);
  }

  private List<Long> ranAt(RateLimit limit, int calls, long tokens) {
    List<Long> ran = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      Mono.fromCallable(() -> ran.add(clock.now(TimeUnit.MILLISECONDS)))
          .transformDeferred(throttledBy(limit, CallWeight.tokens(tokens))).subscribe(v -> {}, e -> {});
    }
    return ran;
  }

  @Test
  void instancesTakeFromTheSameBucketsAndWaitForTheirRefill() {
    RateLimit a = instance(true);
    RateLimit b = instance(true);
    List<Long> onA = ranAt(a, 3, 2_000);
    List<Long> onB = ranAt(b, 2, 2_000);
    assertThat(onA).containsExactly(0L, 0L, 0L);
    assertThat(onB).as("the three calls on a took the 6000 tokens").isEmpty();
    clock.advanceTimeBy(Duration.ofSeconds(20));
    assertThat(onB).as("2000 tokens refill in 20 s").containsExactly(20_000L);
    clock.advanceTimeBy(Duration.ofSeconds(20));
    assertThat(onB).containsExactly(20_000L, 40_000L);
  }

  @Test
  void actualUsageAndProviderHeadersAreSettledInTheStore() {
    RateLimit limit = instance(true);
    record Reply(long tokens, Map<String, List<String>> headers) {}
    TestPublisher<Reply> call = TestPublisher.create();
    call.mono().transformDeferred(throttledBy(limit, CallWeight.tokens(3_000, Reply::tokens)
        .headers(Reply::headers))).subscribe();
    assertThat(store.availableTokens()).isEqualTo(3_000);
    call.emit(new Reply(1_000, Map.of("x-ratelimit-limit-tokens", List.of("6000"),
        "x-ratelimit-remaining-tokens", List.of("2500"))));
    assertThat(store.availableTokens()).as("the provider's 2500 left, then the 2000 unused come back")
        .isEqualTo(4_500);
    StepVerifierless.error(limit, new HttpStatusException(429, Map.of("retry-after", List.of("5"))));
    List<Long> ran = ranAt(limit, 1, 10);
    clock.advanceTimeBy(Duration.ofSeconds(5));
    assertThat(ran).as("a 429 stops calls until its retry-after").containsExactly(5_000L);
  }

  @Test
  void aCallThatCouldNotRunInTimeIsRefusedAtOnceByTheStoresLastAnswer() {
    RateLimit limit = instance(true);
    ranAt(limit, 1, 6_000);
    List<Throwable> errors = new ArrayList<>();
    Mono.just(1).transformDeferred(throttledBy(limit, CallWeight.tokens(6_000))).subscribe(v -> {}, errors::add);
    clock.advanceTimeBy(Duration.ofMillis(1));
    Mono.just(1).transformDeferred(throttledBy(limit, CallWeight.tokens(6_000))).subscribe(v -> {}, errors::add);
    assertThat(errors).singleElement().satisfies(e -> {
      assertThat(((LimitExceededException) e).reason()).isEqualTo(Reason.WOULD_WAIT_TOO_LONG);
      assertThat(((LimitExceededException) e).retryAfter()).hasValueSatisfying(d ->
          assertThat(d).isGreaterThan(Duration.ofSeconds(30)));
    });
  }

  @Test
  void aCancelledWaiterLeavesAndAGrantedButUnclaimedCallGivesItsPermitsBack() {
    RateLimit limit = instance(true);
    ranAt(limit, 1, 6_000);
    Disposable waiting = Mono.just(1).transformDeferred(throttledBy(limit, CallWeight.tokens(1_000))).subscribe();
    assertThat(limit.queued()).isEqualTo(1);
    waiting.dispose();
    assertThat(limit.queued()).isZero();
    clock.advanceTimeBy(Duration.ofSeconds(60));
    assertThat(store.availableTokens()).isEqualTo(6_000);
  }

  @Test
  void anUnreachableStoreSendsCallsThroughALocalLimitOrRefusesThem() {
    store.down = true;
    RateLimit open = instance(true);
    List<Long> ran = ranAt(open, 2, 1_000);
    clock.advanceTimeBy(Duration.ofMillis(500));
    assertThat(ran).as("through the local fallback").containsExactly(500L, 500L);

    RateLimit closed = instance(false);
    List<Throwable> errors = new ArrayList<>();
    Mono.just(1).transformDeferred(throttledBy(closed)).subscribe(v -> {}, errors::add);
    clock.advanceTimeBy(Duration.ofMillis(500));
    assertThat(errors).singleElement().satisfies(e ->
        assertThat(((LimitExceededException) e).reason()).isEqualTo(Reason.STORE_UNAVAILABLE));
  }

  @Test
  void aStoreThatThrowsInsteadOfAnsweringLosesNeitherTheCallsOwnErrorNorTheNextCall() {
    BucketStore throwing = new BucketStore() {
      @Override
      public Mono<Taken> take(long tokens) {
        if (tokens == 13) {
          throw new IllegalStateException("a store's own bug, thrown instead of returned");
        }
        return store.take(tokens);
      }

      @Override
      public Mono<Void> settle(Settlement settlement) {
        throw new IllegalStateException("a store's own bug, thrown instead of returned");
      }

      @Override
      public String toString() {
        return "a throwing store";
      }
    };
    RateLimit limit = instance(settings, throwing);
    HttpStatusException tooMany = new HttpStatusException(429, Map.of());
    List<Throwable> errors = new ArrayList<>();
    Mono.error(tooMany).transformDeferred(throttledBy(limit)).subscribe(v -> {}, errors::add);
    assertThat(errors).as("the call's own error, though its settlement threw").containsExactly(tooMany);

    List<Long> ran = ranAt(limit, 1, 10);
    assertThat(ran).as("the next call is not stuck behind the failed settlement").containsExactly(0L);
    List<Long> throwingTake = ranAt(limit, 1, 13);
    assertThat(throwingTake).as("a take that throws is a store that failed: the local fallback runs the call at once")
        .containsExactly(0L);
  }

  private RateLimit instance(RateSettings settings, BucketStore store) {
    return RateEngine.shared(settings, new SharedSettings(Duration.ofMillis(500), Duration.ofSeconds(3),
        Duration.ofMillis(50), true), store);
  }

  private RateSettings settings(Duration maxWait, long tokens) {
    return new RateSettings("openai", 60, Duration.ofMinutes(1), tokens, tokens < 0 ? null : Duration.ofMinutes(1),
        ProviderRateLimits.all(), maxWait, 1000, () -> clock);
  }

  private List<Throwable> refusals(RateLimit limit, long tokens) {
    List<Throwable> errors = new ArrayList<>();
    Mono.just(1).transformDeferred(throttledBy(limit, CallWeight.tokens(tokens))).subscribe(v -> {}, errors::add);
    return errors;
  }

  @Test
  void aCallThatDoesNotQueueIsRefusedAtOnceWhenTheStoreSaysItsPermitsAreNotThere() {
    RateSettings noWait = settings(Duration.ZERO, 6_000);
    FakeBucketStore buckets = new FakeBucketStore(clock, noWait);
    RateLimit limit = instance(noWait, buckets);
    assertThat(ranAt(limit, 1, 6_000)).as("the store had them").containsExactly(0L);
    clock.advanceTimeBy(Duration.ofSeconds(2));
    List<Throwable> answered = refusals(limit, 1_000);
    assertThat(answered).as("the store's answer: not there").singleElement().satisfies(e -> {
      assertThat(((LimitExceededException) e).reason()).isEqualTo(Reason.WOULD_WAIT_TOO_LONG);
      assertThat(((LimitExceededException) e).retryAfter()).as("800 tokens missing").contains(Duration.ofSeconds(8));
      assertThat(e).hasMessageEndingWith("1 request and 1000 tokens are not free in fake buckets and it does not "
          + "queue calls");
    });
    assertThat(buckets.takes).isEqualTo(2);
    clock.advanceTimeBy(Duration.ofSeconds(3));
    List<Throwable> estimated = refusals(limit, 1_000);
    assertThat(estimated).as("the store's last answer, 3 s ago, says it must wait: not asked again").singleElement()
        .satisfies(e -> {
          assertThat(((LimitExceededException) e).retryAfter()).contains(Duration.ofSeconds(5));
          assertThat(e).hasMessageEndingWith("it does not queue calls");
        });
    assertThat(buckets.takes).isEqualTo(2);
    assertThat(limit.queued()).isZero();
  }

  @Test
  void aCallWhoseDeadlineHasPassedIsRefusedAtOnceSayingSo() {
    RateLimit limit = instance(true);
    ranAt(limit, 1, 6_000);
    ranAt(limit, 1, 1_000);
    assertThat(limit.queued()).isEqualTo(1);
    Deadline passed = Deadline.start(DeadlineSpec.builder(Duration.ofSeconds(1)).scheduler(() -> clock).build(),
        clock);
    clock.advanceTimeBy(Duration.ofSeconds(1));   // exactly at the deadline: no time left
    List<Throwable> errors = new ArrayList<>();
    Mono.just(1).transformDeferred(throttledBy(limit, CallWeight.tokens(1_000)))
        .contextWrite(ctx -> ctx.put(ContextKeys.DEADLINE, passed)).subscribe(v -> {}, errors::add);
    assertThat(errors).singleElement().satisfies(e -> {
      assertThat(((LimitExceededException) e).reason()).isEqualTo(Reason.WOULD_WAIT_TOO_LONG);
      assertThat(e).hasMessageEndingWith("the deadline in force has passed");
    });
    assertThat(limit.queued()).isEqualTo(1);
  }

  @Test
  void aCallOfExactlyTheBucketRunsAndOneTokenMoreIsRefusedWithoutAskingTheStore() {
    RateLimit limit = instance(true);
    assertThat(ranAt(limit, 1, 6_000)).containsExactly(0L);
    assertThat(refusals(limit, 6_001)).singleElement().satisfies(e ->
        assertThat(((LimitExceededException) e).reason()).isEqualTo(Reason.TOO_HEAVY));
    assertThat(store.takes).as("refused without a round trip").isEqualTo(1);
  }

  /** Issue 36 (security 2): too heavy is judged on the configured limit, never on one a provider sent. */
  @Test
  void aCallHeavierThanALimitTheStoreLearntFromTheProviderIsNotRefusedAsNeverRunnable() {
    RateSettings learning = settings(Duration.ofSeconds(50), -1);
    FakeBucketStore buckets = new FakeBucketStore(clock, learning);
    RateLimit limit = instance(learning, buckets);
    record Reply(Map<String, List<String>> headers) {}
    Mono.just(new Reply(Map.of("x-ratelimit-limit-tokens", List.of("5000"))))
        .transformDeferred(throttledBy(limit, CallWeight.<Reply>tokens(0).headers(Reply::headers))).subscribe();
    List<Throwable> errors = refusals(limit, 5_001);
    assertThat(errors).as("the configured limit comes back").noneMatch(e -> e instanceof LimitExceededException l
        && l.reason() == Reason.TOO_HEAVY);
  }

  @Test
  void theAvailablePermitsAreTheConfiguredOnesUntilTheStoreAnswersThenItsLastAnswer() {
    RateLimit limit = instance(true);
    assertThat(limit.name()).isEqualTo("openai");
    assertThat(limit.availableRequests()).isEqualTo(60);
    assertThat(limit.availableTokens()).isEqualTo(6_000);
    ranAt(limit, 1, 2_000);
    assertThat(limit.availableRequests()).isEqualTo(59);
    assertThat(limit.availableTokens()).isEqualTo(4_000);

    RateLimit tokensUnlimited = instance(settings(Duration.ofSeconds(50), -1), store);
    assertThat(tokensUnlimited.availableTokens()).isEqualTo(Long.MAX_VALUE);
    assertThat(tokensUnlimited.availableRequests()).isEqualTo(60);
  }

  @Test
  void itsTextNamesTheStoreWhatWaitsHereAndWhatItDoesWhenTheStoreIsDown() {
    assertThat(instance(true).toString()).startsWith("RateLimit{openai, shared in fake buckets, queued here 0, "
        + "maxWait 50s, fails open, ");
    assertThat(instance(false).toString()).contains(", fails closed, ");
  }

  @Test
  void callsWaitingInTheLocalFallbackCountAsQueued() {
    store.down = true;
    RateLimit limit = instance(true);
    List<Long> ran = ranAt(limit, 3, 3_000);
    clock.advanceTimeBy(Duration.ofMillis(500));
    assertThat(ran).containsExactly(500L, 500L);
    assertThat(limit.queued()).as("the third waits in the local limit").isEqualTo(1);
  }

  @Test
  void aCallRefusedBeforeTheWireGivesItsPermitsBackAndOneThatFailedAfterItKeepsThem() {
    RateLimit limit = instance(true);
    Mono.error(new IllegalStateException("reset")).transformDeferred(throttledBy(limit, CallWeight.tokens(1_000)))
        .subscribe(v -> {}, e -> {});
    assertThat(store.availableTokens()).as("the provider may have counted it").isEqualTo(5_000);
    Mono.error(new LimitExceededException("inner", Reason.QUEUE_FULL, null, "full"))
        .transformDeferred(throttledBy(limit, CallWeight.tokens(1_000))).subscribe(v -> {}, e -> {});
    assertThat(store.availableTokens()).as("refused by a limit inside: never sent").isEqualTo(5_000);
  }

  @Test
  void aCallThatUsedNoTokensGivesItsWholeEstimateBack() {
    RateLimit limit = instance(true);
    Mono.just(1).transformDeferred(throttledBy(limit, CallWeight.tokens(1_000, v -> 0L))).subscribe();
    assertThat(store.availableTokens()).isEqualTo(6_000);
  }

  @Test
  void aServerErrorsHeadersLowerTheBucketsWithoutStoppingCallsAsA429Would() {
    RateLimit limit = instance(true);
    StepVerifierless.error(limit, new HttpStatusException(503, Map.of("x-ratelimit-limit-tokens", List.of("6000"),
        "x-ratelimit-remaining-tokens", List.of("2500"))));
    assertThat(store.availableTokens()).isEqualTo(2_500);
    assertThat(ranAt(limit, 1, 10)).as("no retry-after, no pause").containsExactly(0L);
  }

  @Test
  void aCallThatMayNotWaitIsRefusedUntilTheRetryAfterTheStoreLastReportedEvenWithItsTokensThere() {
    RateSettings noWait = settings(Duration.ZERO, 6_000);
    FakeBucketStore buckets = new FakeBucketStore(clock, noWait);
    RateLimit limit = instance(noWait, buckets);
    StepVerifierless.error(limit, new HttpStatusException(429, Map.of("retry-after", List.of("5"))));
    assertThat(refusals(limit, 10)).as("the store: blocked for 5 s").singleElement().satisfies(e ->
        assertThat(((LimitExceededException) e).retryAfter()).contains(Duration.ofSeconds(5)));
    clock.advanceTimeBy(Duration.ofSeconds(1));
    assertThat(refusals(limit, 10)).as("by its last answer, 4 s to go").singleElement().satisfies(e ->
        assertThat(((LimitExceededException) e).retryAfter()).contains(Duration.ofSeconds(4)));
  }

  @Test
  void aWaitersTurnCountsTheCallsQueuedBeforeIt() {
    RateSettings fifteen = settings(Duration.ofSeconds(15), 6_000);
    FakeBucketStore buckets = new FakeBucketStore(clock, fifteen);
    RateLimit limit = instance(fifteen, buckets);
    ranAt(limit, 1, 6_000);
    clock.advanceTimeBy(Duration.ofSeconds(2));
    List<Long> second = ranAt(limit, 1, 1_000);
    assertThat(limit.queued()).isEqualTo(1);
    assertThat(refusals(limit, 1_000)).as("200 there, 2000 wanted by the two: 18 s, past its 15 s").singleElement()
        .satisfies(e -> assertThat(((LimitExceededException) e).retryAfter()).contains(Duration.ofSeconds(18)));
    clock.advanceTimeBy(Duration.ofSeconds(8));
    assertThat(second).containsExactly(10_000L);
  }

  @Test
  void aFullQueueRefusesTheNextCallAtOnce() {
    RateLimit limit = RateEngine.shared(new RateSettings("openai", 60, Duration.ofMinutes(1), 6_000,
        Duration.ofMinutes(1), ProviderRateLimits.all(), Duration.ofSeconds(50), 1, () -> clock),
        new SharedSettings(Duration.ofMillis(500), Duration.ofSeconds(3), Duration.ofMillis(50), true), store);
    ranAt(limit, 1, 6_000);
    ranAt(limit, 1, 1_000);
    assertThat(refusals(limit, 1_000)).singleElement().satisfies(e ->
        assertThat(((LimitExceededException) e).reason()).isEqualTo(Reason.QUEUE_FULL));
    assertThat(limit.queued()).isEqualTo(1);
  }

  @Test
  void aCancelledWaiterBehindAnotherLeavesTheQueueAtOnce() {
    RateLimit limit = instance(true);
    ranAt(limit, 1, 6_000);
    ranAt(limit, 1, 1_000);
    Disposable second = Mono.just(1).transformDeferred(throttledBy(limit, CallWeight.tokens(1_000))).subscribe();
    assertThat(limit.queued()).isEqualTo(2);
    second.dispose();
    assertThat(limit.queued()).isEqualTo(1);
  }

  @Test
  void aStreamThatFailsAfterCarryingAUsageFigureIsSettledWithIt() {
    RateLimit limit = instance(true);
    Flux.just(100L).concatWith(Flux.error(new IllegalStateException("reset")))
        .transformDeferred(throttledBy(limit, CallWeight.tokens(600, (Long used) -> used))).subscribe(v -> {}, e -> {});
    assertThat(store.availableTokens()).isEqualTo(5_900);
  }

  @Test
  void aWaiterWhosePermitsAnotherInstanceTookIsRefusedWhenItsMaxWaitRunsOut() {
    RateSettings twelve = settings(Duration.ofSeconds(12), 6_000);
    FakeBucketStore buckets = new FakeBucketStore(clock, twelve);
    RateLimit a = instance(twelve, buckets);
    RateLimit b = instance(twelve, buckets);
    ranAt(a, 1, 6_000);
    List<Throwable> errors = new ArrayList<>();
    Mono.just(1).transformDeferred(throttledBy(a, CallWeight.tokens(1_000))).subscribe(v -> {}, errors::add);
    clock.advanceTimeBy(Duration.ofMillis(9_500));
    assertThat(ranAt(b, 1, 900)).as("b takes 900 of the 950 there").containsExactly(9_500L);
    clock.advanceTimeBy(Duration.ofMillis(2_499));
    assertThat(errors).isEmpty();
    clock.advanceTimeBy(Duration.ofMillis(1));
    assertThat(errors).singleElement().satisfies(e ->
        assertThat(((LimitExceededException) e).reason()).isEqualTo(Reason.WAITED_TOO_LONG));
  }

  @Test
  void oneTaskQueueingManyCallsDoesNotStarveAnotherTasksCall() {
    RateLimit limit = RateEngine.shared(new RateSettings("openai", 60, Duration.ofMinutes(1), -1, null,
        ProviderRateLimits.all(), Duration.ofMinutes(1), 1000, () -> clock),
        new SharedSettings(Duration.ofMillis(500), Duration.ofSeconds(3), Duration.ofMillis(50), true),
        new FakeBucketStore(clock, new RateSettings("openai", 60, Duration.ofMinutes(1), -1, null,
            ProviderRateLimits.all(), Duration.ofMinutes(1), 1000, () -> clock)));
    TaskBudget budget = TaskBudget.builder(Duration.ofHours(1)).scheduler(() -> clock).build();
    List<String> order = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      Mono.just(i).transformDeferred(throttledBy(limit)).subscribe();
    }
    Flux.range(0, 30).flatMap(i -> Mono.fromCallable(() -> order.add("A")).transformDeferred(throttledBy(limit)))
        .transformDeferred(withTaskBudget(budget)).subscribe();
    Flux.range(0, 5).concatMap(i -> Mono.fromCallable(() -> order.add("B")).transformDeferred(throttledBy(limit)))
        .transformDeferred(withTaskBudget(budget)).subscribe();
    clock.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(order).as("one request a second, shared between the two tasks: %s", order).hasSize(10)
        .containsExactly("A", "B", "A", "B", "A", "B", "A", "B", "A", "B");
  }

  /** Runs a call that fails with {@code error} through {@code limit}. */
  private static final class StepVerifierless {
    static void error(RateLimit limit, Throwable error) {
      Mono.error(error).transformDeferred(throttledBy(limit)).subscribe(v -> {}, e -> {});
    }
  }
}
