package io.breakwater.limit;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.throttledBy;
import static io.breakwater.Breakwater.withDeadline;
import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.agent.TaskBudget;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.limit.LimitExceededException.Reason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.publisher.TestPublisher;
import reactor.test.scheduler.VirtualTimeScheduler;

class ThrottledByTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

  @AfterEach
  void stop() {
    clock.dispose();
  }

  /** A reply that carries its usage and the provider's headers. */
  record Reply(long tokens, Map<String, List<String>> headers) {}

  private RateLimit.Builder limit(String name) {
    return RateLimit.builder(name).scheduler(() -> clock);
  }

  /** Subscribes {@code call} through {@code operator}, recording when it ran and how it ended. */
  private static final class Probe {
    final List<Long> ranAt = new ArrayList<>();
    final List<Throwable> errors = new ArrayList<>();
    final AtomicInteger done = new AtomicInteger();
  }

  private <T> Disposable run(Mono<T> call, java.util.function.Function<Mono<T>, Mono<T>> operators, Probe probe) {
    return Mono.defer(() -> {
          probe.ranAt.add(clock.now(TimeUnit.MILLISECONDS));
          return call;
        })
        .transform(operators)
        .subscribe(v -> probe.done.incrementAndGet(), probe.errors::add);
  }

  @Test
  void eachCallTakesOneRequestAndWaitsForTheNextWhenNoneIsLeft() {
    RateLimit rate = limit("crm").requests(3, Duration.ofMinutes(1)).maxWait(Duration.ofMinutes(1)).build();
    Probe probe = new Probe();
    for (int i = 0; i < 5; i++) {
      run(Mono.just(i), m -> m.transformDeferred(throttledBy(rate)), probe);
    }
    assertThat(probe.ranAt).containsExactly(0L, 0L, 0L);
    assertThat(rate.queued()).isEqualTo(2);
    clock.advanceTimeBy(Duration.ofSeconds(20));
    assertThat(probe.ranAt).as("one request refills every 20 s").containsExactly(0L, 0L, 0L, 20_000L);
    clock.advanceTimeBy(Duration.ofSeconds(20));
    assertThat(probe.ranAt).containsExactly(0L, 0L, 0L, 20_000L, 40_000L);
    assertThat(probe.done).hasValue(5);
    assertThat(rate.queued()).isZero();
  }

  @Test
  void aCallThatCannotRunBeforeItsDeadlineIsRefusedAtOnceSayingWhenItCould() {
    RateLimit rate = limit("openai").tokens(1_000, Duration.ofMinutes(1)).build();
    Probe first = new Probe();
    run(Mono.just(1), m -> m.transformDeferred(throttledBy(rate, CallWeight.tokens(1_000))), first);
    assertThat(first.done).hasValue(1);

    Probe second = new Probe();
    run(Mono.just(2), m -> m.transformDeferred(throttledBy(rate, CallWeight.tokens(500)))
        .transformDeferred(withDeadline(io.breakwater.deadline.DeadlineSpec.builder(Duration.ofSeconds(10))
            .scheduler(() -> clock).build())), second);

    assertThat(second.ranAt).isEmpty();
    assertThat(second.errors).singleElement().satisfies(e -> {
      LimitExceededException refusal = (LimitExceededException) e;
      assertThat(refusal.reason()).isEqualTo(Reason.WOULD_WAIT_TOO_LONG);
      assertThat(refusal.retryAfter()).as("500 tokens at 1000 per minute").contains(Duration.ofSeconds(30));
      assertThat(refusal).hasMessage("Limit 'openai' refused the call: 1 request and 500 tokens could be taken only "
          + "in 30s, after 0 queued calls, past the deadline in force (10s)");
    });
    assertThat(rate.queued()).as("refused at once, not queued").isZero();
  }

  @Test
  void aWaitingCallRunsWhenItsTokensHaveRefilled() {
    RateLimit rate = limit("openai").tokens(1_000, Duration.ofMinutes(1)).build();
    Probe probe = new Probe();
    run(Mono.just(1), m -> m.transformDeferred(throttledBy(rate, CallWeight.tokens(800))), probe);
    run(Mono.just(2), m -> m.transformDeferred(throttledBy(rate, CallWeight.tokens(500))), probe);
    assertThat(probe.ranAt).containsExactly(0L);
    clock.advanceTimeBy(Duration.ofMillis(17_999));
    assertThat(probe.ranAt).as("300 tokens missing: 18 s").containsExactly(0L);
    clock.advanceTimeBy(Duration.ofMillis(1));
    assertThat(probe.ranAt).containsExactly(0L, 18_000L);
  }

  @Test
  void actualUsageReplacesTheEstimateWhenTheCallEnds() {
    RateLimit rate = limit("openai").tokens(10_000, Duration.ofMinutes(1)).build();
    TestPublisher<Reply> call = TestPublisher.create();
    call.mono().transformDeferred(throttledBy(rate, CallWeight.tokens(4_000, Reply::tokens))).subscribe();
    assertThat(rate.availableTokens()).isEqualTo(6_000);
    call.emit(new Reply(1_500, Map.of()));
    assertThat(rate.availableTokens()).as("2500 unused tokens come back").isEqualTo(8_500);

    TestPublisher<Reply> bigger = TestPublisher.create();
    bigger.mono().transformDeferred(throttledBy(rate, CallWeight.tokens(1_000, Reply::tokens))).subscribe();
    bigger.emit(new Reply(3_000, Map.of()));
    assertThat(rate.availableTokens()).as("2000 more than estimated are taken").isEqualTo(5_500);
  }

  @Test
  void aMonoIsCorrectedWithItsValueSoWhatFollowsItDownstreamSeesTheCorrection() {
    RateLimit rate = limit("openai").tokens(10_000, Duration.ofMinutes(1)).build();
    // Mono.flatMap runs the next step on the value, before the call's completion reaches the limit
    StepVerifier.create(Mono.just(new Reply(300, Map.of()))
            .transformDeferred(throttledBy(rate, CallWeight.tokens(800, Reply::tokens)))
            .flatMap(reply -> Mono.fromCallable(rate::availableTokens)))
        .expectNext(9_700L)
        .verifyComplete();
    assertThat(rate.availableTokens()).as("corrected once").isEqualTo(9_700);
  }

  @Test
  void aMonoIsSettledByItsValueOnceWhateverFollowsIt() {
    RateLimit rate = limit("openai").requests(10, Duration.ofMinutes(1)).tokens(10_000, Duration.ofMinutes(1))
        .build();
    LimitExceededException refusedFurtherIn = new LimitExceededException("inner", Reason.QUEUE_FULL, null, "full");
    // a Mono that breaks its contract: a refusal (which would give permits back) after its value
    Mono<Reply> valueThenRefusal = new Mono<>() {
      @Override
      public void subscribe(reactor.core.CoreSubscriber<? super Reply> actual) {
        actual.onSubscribe(reactor.core.publisher.Operators.emptySubscription());
        actual.onNext(new Reply(300, Map.of()));
        actual.onError(refusedFurtherIn);
      }
    };
    StepVerifier.create(valueThenRefusal.transformDeferred(throttledBy(rate, CallWeight.tokens(800, Reply::tokens))))
        .expectNextCount(1)
        .verifyErrorSatisfies(e -> assertThat(e).isSameAs(refusedFurtherIn));
    assertThat(rate.availableTokens()).as("corrected by its value, once, and kept").isEqualTo(9_700);
    assertThat(rate.availableRequests()).isEqualTo(9);

    StepVerifier.create(valueThenRefusal.transformDeferred(throttledBy(rate)))
        .expectNextCount(1)
        .verifyErrorSatisfies(e -> assertThat(e).isSameAs(refusedFurtherIn));
    assertThat(rate.availableRequests()).as("without a usage figure too: the request it took is kept")
        .isEqualTo(8);
    assertThat(rate.availableTokens()).isEqualTo(9_700);
  }

  @Test
  void aStreamIsCorrectedByTheLastUsageFigureItCarried() {
    RateLimit rate = limit("anthropic").tokens(10_000, Duration.ofMinutes(1)).build();
    TestPublisher<Reply> stream = TestPublisher.create();
    stream.flux().transformDeferred(throttledBy(rate, CallWeight.tokens(2_000, Reply::tokens))).subscribe();
    stream.next(new Reply(-1, Map.of()), new Reply(300, Map.of()), new Reply(-1, Map.of()), new Reply(700, Map.of()));
    assertThat(rate.availableTokens()).as("corrected only when the stream ends").isEqualTo(8_000);
    stream.complete();
    assertThat(rate.availableTokens()).isEqualTo(9_300);
  }

  @Test
  void aStreamThatFailsWithAServerErrorIsCorrectedByTheLastUsageFigureItCarriedAsInTheRedisLimit() {
    RateLimit rate = limit("anthropic").tokens(10_000, Duration.ofMinutes(1)).build();
    TestPublisher<Reply> stream = TestPublisher.create();
    stream.flux().transformDeferred(throttledBy(rate, CallWeight.tokens(2_000, Reply::tokens))).subscribe(r -> { },
        e -> { });
    stream.next(new Reply(300, Map.of()));
    stream.error(new HttpStatusException(500));
    assertThat(rate.availableTokens()).as("charged the 300 tokens it used, not its estimate").isEqualTo(9_700);
  }

  @Test
  void aFailedCallKeepsItsEstimateAndACallRefusedBeforeTheWireGivesItsPermitsBack() {
    RateLimit rate = limit("openai").requests(10, Duration.ofMinutes(1)).tokens(10_000, Duration.ofMinutes(1))
        .build();
    StepVerifier.create(Mono.error(new IllegalStateException("reset"))
            .transformDeferred(throttledBy(rate, CallWeight.tokens(1_000))))
        .verifyError(IllegalStateException.class);
    assertThat(rate.availableTokens()).as("the provider may have counted it").isEqualTo(9_000);
    assertThat(rate.availableRequests()).isEqualTo(9);

    CircuitBreaker open = CircuitBreaker.builder("openai").minimumCalls(2).scheduler(() -> clock)
        .meterRegistry(new io.micrometer.core.instrument.simple.SimpleMeterRegistry()).build();
    for (int i = 0; i < 2; i++) {
      Mono.error(new HttpStatusException(503)).transformDeferred(guardedBy(open)).subscribe(v -> {}, e -> {});
    }
    assertThat(open.state()).isEqualTo(CircuitBreaker.State.OPEN);
    StepVerifier.create(Mono.just("x").transformDeferred(guardedBy(open))
            .transformDeferred(throttledBy(rate, CallWeight.tokens(1_000))))
        .verifyError(io.breakwater.breaker.CircuitBreakerOpenException.class);
    assertThat(rate.availableTokens()).as("the open breaker refused it before the wire").isEqualTo(9_000);
    assertThat(rate.availableRequests()).isEqualTo(9);
  }

  @Test
  void openAiHeadersLowerWhatTheBucketsHoldCountedFromTheCallsAdmission() {
    RateLimit rate = limit("openai").requests(60, Duration.ofMinutes(1)).tokens(10_000, Duration.ofMinutes(1))
        .providerHeaders(ProviderRateLimits.openAi()).build();
    TestPublisher<Reply> first = TestPublisher.create();
    first.mono().transformDeferred(throttledBy(rate, CallWeight.<Reply>tokens(1_000).headers(Reply::headers)))
        .subscribe();
    // a second call admitted after the first, before the first's answer: the provider had not counted it yet
    TestPublisher<Reply> second = TestPublisher.create();
    second.mono().transformDeferred(throttledBy(rate, CallWeight.tokens(500))).subscribe();
    assertThat(rate.availableTokens()).isEqualTo(8_500);

    // other clients of the key used 6000 tokens: the provider says 3000 were left after the first call
    first.emit(new Reply(1_000, Map.of("X-RateLimit-Limit-Tokens", List.of("10000"),
        "x-ratelimit-remaining-tokens", List.of("3000"), "x-ratelimit-reset-tokens", List.of("42s"),
        "x-ratelimit-remaining-requests", List.of("40"))));
    assertThat(rate.availableTokens()).as("3000 left, minus the 500 of the call admitted since").isEqualTo(2_500);
    assertThat(rate.availableRequests()).isEqualTo(39);

    // the reset paces the refill: 7000 tokens in 42 s, not 10000 per minute (7000 in 42 s is exactly that)
    clock.advanceTimeBy(Duration.ofSeconds(6));
    assertThat(rate.availableTokens()).isEqualTo(3_500);
  }

  @Test
  void aResetSlowerThanTheConfiguredRatePacesTheRefillUntilTheResetInstant() {
    RateLimit rate = limit("anthropic").tokens(6_000, Duration.ofMinutes(1)).build();
    TestPublisher<Reply> call = TestPublisher.create();
    call.mono().transformDeferred(throttledBy(rate, CallWeight.<Reply>tokens(0).headers(Reply::headers)))
        .subscribe();
    call.emit(new Reply(0, Map.of("anthropic-ratelimit-tokens-limit", List.of("6000"),
        "anthropic-ratelimit-tokens-remaining", List.of("0"),
        "anthropic-ratelimit-tokens-reset", List.of("1970-01-01T00:02:00Z"))));
    // full again at 2 minutes: 50 tokens a second, not 100
    clock.advanceTimeBy(Duration.ofSeconds(60));
    assertThat(rate.availableTokens()).isEqualTo(3_000);
    clock.advanceTimeBy(Duration.ofSeconds(60));
    assertThat(rate.availableTokens()).isEqualTo(6_000);
  }

  @Test
  void aStreamThroughTheLimitDeliversEveryElementAndCompletesAndAnEmptyMonoCompletes() {
    RateLimit rate = limit("openai").requests(10, Duration.ofMinutes(1)).build();
    StepVerifier.create(Flux.just(1, 2, 3).transformDeferred(throttledBy(rate))).expectNext(1, 2, 3)
        .verifyComplete();
    StepVerifier.create(Mono.empty().transformDeferred(throttledBy(rate, CallWeight.tokens(0)))).verifyComplete();
    assertThat(rate.availableRequests()).isEqualTo(8);
  }

  @Test
  void cancellingAThrottledCallCancelsItsUpstream() {
    RateLimit rate = limit("openai").requests(10, Duration.ofMinutes(1)).build();
    TestPublisher<String> call = TestPublisher.create();
    Disposable caller = call.flux().transformDeferred(throttledBy(rate)).subscribe();
    caller.dispose();
    call.assertCancelled();
  }

  @Test
  void aStreamCancelledAfterCarryingAUsageFigureIsCorrectedByIt() {
    RateLimit rate = limit("openai").tokens(1_000, Duration.ofMinutes(1)).build();
    TestPublisher<Reply> stream = TestPublisher.create();
    Disposable caller = stream.flux().transformDeferred(throttledBy(rate, CallWeight.tokens(600, Reply::tokens)))
        .subscribe();
    stream.next(new Reply(100, Map.of()));
    caller.dispose();
    assertThat(rate.availableTokens()).isEqualTo(900);

    TestPublisher<Reply> unused = TestPublisher.create();
    Disposable unusedCaller = unused.flux()
        .transformDeferred(throttledBy(rate, CallWeight.tokens(100, Reply::tokens))).subscribe();
    unused.next(new Reply(0, Map.of()));
    unusedCaller.dispose();
    assertThat(rate.availableTokens()).as("a figure of 0: all 100 come back").isEqualTo(900);

    TestPublisher<Reply> silent = TestPublisher.create();
    silent.flux().transformDeferred(throttledBy(rate, CallWeight.tokens(600, Reply::tokens))).subscribe().dispose();
    assertThat(rate.availableTokens()).as("no figure: the estimate stays taken").isEqualTo(300);
  }

  @Test
  void aUsageFigureThatCannotBeReadFailsTheCallAndCancelsItsUpstream() {
    RateLimit rate = limit("openai").tokens(1_000, Duration.ofMinutes(1)).build();
    TestPublisher<Reply> call = TestPublisher.create();
    IllegalStateException unreadable = new IllegalStateException("no usage in this reply");
    StepVerifier.create(call.flux().transformDeferred(throttledBy(rate, CallWeight.<Reply>tokens(100, r -> {
          throw unreadable;
        }))))
        .then(() -> call.next(new Reply(5, Map.of())))
        .verifyErrorSatisfies(e -> assertThat(e).isSameAs(unreadable));
    call.assertCancelled();
  }

  @Test
  void aNameThatCannotTagARedisKeyIsRefused() {
    assertThatThrownBy(() -> RateLimit.builder("open{ai}").requests(1, Duration.ofSeconds(1)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Rate limit name 'open{ai}' is blank, longer than 200 characters or contains a brace");
  }

  @Test
  void a429WrappedByTheCallersOwnExceptionsIsStillRead() {
    RateLimit rate = limit("openai").requests(60, Duration.ofMinutes(1)).build();
    Throwable wrapped = new IllegalStateException("tool failed", new RuntimeException("client",
        new HttpStatusException(429, Map.of("retry-after", List.of("3")))));
    StepVerifier.create(Mono.error(wrapped).transformDeferred(throttledBy(rate))).verifyErrorMatches(e -> e == wrapped);
    Probe probe = new Probe();
    run(Mono.just(1), m -> m.transformDeferred(throttledBy(rate)), probe);
    clock.advanceTimeBy(Duration.ofSeconds(3));
    assertThat(probe.ranAt).containsExactly(3_000L);
  }

  @Test
  void aCauseChainThatLoopsIsReadAFewCausesDeepAndNoFurther() {
    RateLimit rate = limit("openai").requests(60, Duration.ofMinutes(1)).build();
    RuntimeException a = new RuntimeException("a");
    RuntimeException b = new RuntimeException("b", a);
    a.initCause(b);
    StepVerifier.create(Mono.error(a).transformDeferred(throttledBy(rate))).verifyErrorMatches(e -> e == a);
    Throwable deep = new HttpStatusException(429, Map.of("retry-after", List.of("3")));
    for (int i = 0; i < 8; i++) {
      deep = new RuntimeException("wrapper " + i, deep);
    }
    StepVerifier.create(Mono.error(deep).transformDeferred(throttledBy(rate))).expectError().verify();
    Probe probe = new Probe();
    run(Mono.just(1), m -> m.transformDeferred(throttledBy(rate)), probe);
    assertThat(probe.ranAt).as("a 429 under eight wrappers is not read").containsExactly(0L);
  }

  @Test
  void aNullElementFromABrokenPublisherIsRefusedNamingTheRule() {
    RateLimit rate = limit("openai").requests(10, Duration.ofMinutes(1)).build();
    TestPublisher<String> broken = TestPublisher.createNoncompliant(TestPublisher.Violation.ALLOW_NULL);
    broken.flux().transformDeferred(throttledBy(rate)).subscribe(v -> {}, e -> {});
    assertThatThrownBy(() -> broken.next(null)).isInstanceOf(NullPointerException.class)
        .hasMessage("onNext(null) in throttledBy(openai): Reactive Streams rule 2.13");
  }

  @Test
  void aReaderOfTheApplicationsOwnMayAskForAWaitBeyondWhatNanosecondsHoldAndTheCallStillEndsWithItsOwnError() {
    Duration forever = Duration.ofSeconds(Long.MAX_VALUE);
    RateLimit rate = limit("openai").requests(60, Duration.ofMinutes(1))
        .providerHeaders((headers, now) -> new ProviderRateLimits.Reading(
            new ProviderRateLimits.Quota(60, 0, forever), null, forever))
        .build();
    HttpStatusException tooMany = new HttpStatusException(429);
    // before the fix the reading's conversion threw inside the call's end and the call never ended: bound the wait
    StepVerifier.create(Mono.error(tooMany).transformDeferred(throttledBy(rate)))
        .expectErrorSatisfies(e -> assertThat(e).isSameAs(tooMany))
        .verify(Duration.ofSeconds(5));
    StepVerifier.create(Mono.just(1).transformDeferred(throttledBy(rate)))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(LimitExceededException.class,
            refused -> assertThat(refused.reason()).isEqualTo(LimitExceededException.Reason.WOULD_WAIT_TOO_LONG)))
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void a429StopsEveryCallUntilItsRetryAfter() {
    RateLimit rate = limit("openai").requests(60, Duration.ofMinutes(1)).build();
    StepVerifier.create(Mono.error(new HttpStatusException(429, Map.of("Retry-After", List.of("7"))))
            .transformDeferred(throttledBy(rate)))
        .verifyError(HttpStatusException.class);
    Probe probe = new Probe();
    run(Mono.just(1), m -> m.transformDeferred(throttledBy(rate)), probe);
    assertThat(probe.ranAt).isEmpty();
    clock.advanceTimeBy(Duration.ofMillis(6_999));
    assertThat(probe.ranAt).isEmpty();
    clock.advanceTimeBy(Duration.ofMillis(1));
    assertThat(probe.ranAt).containsExactly(7_000L);

    StepVerifier.create(Mono.error(new HttpStatusException(429)).transformDeferred(throttledBy(rate)))
        .verifyError(HttpStatusException.class);
    Probe after = new Probe();
    run(Mono.just(1), m -> m.transformDeferred(throttledBy(rate)), after);
    clock.advanceTimeBy(Duration.ofMillis(999));
    assertThat(after.ranAt).as("a bare 429 stops calls for 1 s and empties the bucket").isEmpty();
    clock.advanceTimeBy(Duration.ofMillis(1));
    assertThat(after.ranAt).containsExactly(8_000L);
  }

  @Test
  void a429DespiteTheLimitShowsItsShortfallWhichIsKeptInReserve() {
    RateLimit rate = limit("shared-key").tokens(10_000, Duration.ofMinutes(1)).build();
    StepVerifier.create(Mono.error(new HttpStatusException(429, Map.of("x-ratelimit-limit-tokens",
                List.of("10000"), "x-ratelimit-remaining-tokens", List.of("9400"), "retry-after", List.of("0"))))
            .transformDeferred(throttledBy(rate, CallWeight.tokens(1_000))))
        .verifyError(HttpStatusException.class);
    // the limit held 10 000 (the refused call's 1000 back); the provider had 9400: 600 went to other clients
    assertThat(rate.availableTokens()).as("9400 held, 600 of them in reserve").isEqualTo(8_800);
    clock.advanceTimeBy(Duration.ofMinutes(5));
    assertThat(rate.availableTokens()).as("full again, the reserve halved").isEqualTo(9_700);
  }

  @Test
  void aCallHeavierThanTheLimitIsRefusedAsNeverRunnable() {
    RateLimit rate = limit("openai").tokens(1_000, Duration.ofMinutes(1)).build();
    StepVerifier.create(Mono.just(1).transformDeferred(throttledBy(rate, CallWeight.tokens(1_001))))
        .expectErrorSatisfies(e -> {
          assertThat(((LimitExceededException) e).reason()).isEqualTo(Reason.TOO_HEAVY);
          assertThat(((LimitExceededException) e).retryAfter()).isEmpty();
          assertThat(e).hasMessageContaining("a call of 1001 tokens can never run");
        })
        .verify();
  }

  @Test
  void aCancelledWaiterLeavesTheQueueAndItsTurnGoesToTheNext() {
    RateLimit rate = limit("crm").requests(1, Duration.ofSeconds(10)).build();
    Probe probe = new Probe();
    run(Mono.just(0), m -> m.transformDeferred(throttledBy(rate)), probe);
    Disposable second = run(Mono.just(1), m -> m.transformDeferred(throttledBy(rate)), probe);
    run(Mono.just(2), m -> m.transformDeferred(throttledBy(rate)), probe);
    assertThat(rate.queued()).isEqualTo(2);
    second.dispose();
    assertThat(rate.queued()).isEqualTo(1);
    clock.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(probe.ranAt).containsExactly(0L, 10_000L);
    assertThat(rate.queued()).isZero();
    assertThat(rate.availableRequests()).isZero();
  }

  @Test
  void aWaiterThatOutlivesItsMaxWaitIsRefusedWhenItRunsOut() {
    RateLimit rate = limit("crm").requests(1, Duration.ofSeconds(10)).maxWait(Duration.ofSeconds(15)).build();
    Probe probe = new Probe();
    run(Mono.just(0), m -> m.transformDeferred(throttledBy(rate)), probe);
    run(Mono.just(1), m -> m.transformDeferred(throttledBy(rate)), probe);
    run(Mono.just(2), m -> m.transformDeferred(throttledBy(rate)), probe);
    // the third call's turn would come at 20 s, after its 15 s: refused at once
    assertThat(probe.errors).singleElement().satisfies(e ->
        assertThat(((LimitExceededException) e).retryAfter()).contains(Duration.ofSeconds(20)));
    clock.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(probe.ranAt).containsExactly(0L, 10_000L);
  }

  @Test
  void oneTaskQueueingManyCallsDoesNotStarveAnotherTasksCall() {
    RateLimit rate = limit("openai").requests(60, Duration.ofMinutes(1)).maxWait(Duration.ofMinutes(1)).build();
    TaskBudget budget = TaskBudget.builder(Duration.ofHours(1)).scheduler(() -> clock).build();
    List<String> order = new ArrayList<>();
    // spend the burst so that everything queues
    for (int i = 0; i < 60; i++) {
      Mono.just(i).transformDeferred(throttledBy(rate)).subscribe();
    }
    // task A queues 30 calls at once; task B then makes one call at a time
    Flux.range(0, 30).flatMap(i -> Mono.fromCallable(() -> order.add("A")).transformDeferred(throttledBy(rate)))
        .transformDeferred(withTaskBudget(budget)).subscribe();
    Flux.range(0, 5).concatMap(i -> Mono.fromCallable(() -> order.add("B")).transformDeferred(throttledBy(rate)))
        .transformDeferred(withTaskBudget(budget)).subscribe();
    clock.advanceTimeBy(Duration.ofSeconds(10));
    // ten turns (one a second) were shared between the two tasks, not given to A's backlog first
    assertThat(order).hasSize(10);
    assertThat(order.stream().filter("B"::equals).count()).as("B's calls: %s", order).isEqualTo(5);
    assertThat(order.subList(0, 10)).containsExactly("A", "B", "A", "B", "A", "B", "A", "B", "A", "B");
    clock.advanceTimeBy(Duration.ofSeconds(25));
    assertThat(order).hasSize(35);
  }

  @Test
  void learntLimitsNeedNoConfiguredOnes() {
    RateLimit rate = limit("openai").providerHeaders(ProviderRateLimits.openAi()).build();
    assertThat(rate.availableTokens()).isEqualTo(Long.MAX_VALUE);
    TestPublisher<Reply> call = TestPublisher.create();
    call.mono().transformDeferred(throttledBy(rate, CallWeight.<Reply>tokens(100).headers(Reply::headers)))
        .subscribe();
    call.emit(new Reply(100, Map.of("x-ratelimit-limit-tokens", List.of("1000"),
        "x-ratelimit-remaining-tokens", List.of("900"))));
    assertThat(rate.availableTokens()).isEqualTo(900);
    clock.advanceTimeBy(Duration.ofSeconds(6));
    assertThat(rate.availableTokens()).as("a learnt limit refills per minute").isEqualTo(1_000);
  }

  @Test
  void aConfiguredLimitIsNeverRaisedByTheProvider() {
    RateLimit rate = limit("shared-key").tokens(5_000, Duration.ofMinutes(1)).build();
    TestPublisher<Reply> call = TestPublisher.create();
    call.mono().transformDeferred(throttledBy(rate, CallWeight.<Reply>tokens(0).headers(Reply::headers)))
        .subscribe();
    call.emit(new Reply(0, Map.of("x-ratelimit-limit-tokens", List.of("10000"),
        "x-ratelimit-remaining-tokens", List.of("9000"))));
    assertThat(rate.availableTokens()).isEqualTo(5_000);
  }

  @Test
  void badSettingsSayWhatToChange() {
    assertThatThrownBy(() -> RateLimit.builder("x").build()).hasMessageContaining("has no limit: add .requests(60, "
        + "Duration.ofMinutes(1))");
    assertThatThrownBy(() -> RateLimit.builder("x").tokens(0, Duration.ofMinutes(1)).build())
        .hasMessage("Rate limit 'x' allows 0 tokens per interval: give 1 or more (leave it unset for no limit)");
    assertThatThrownBy(() -> RateLimit.builder("x").requests(1, Duration.ZERO).build())
        .hasMessageContaining("requests interval is PT0S: give a positive duration of at most 366 days");
    assertThatThrownBy(() -> RateLimit.builder("x").requests(1, Duration.ofDays(400)).build())
        .hasMessageContaining("at most 366 days");
    assertThatThrownBy(() -> RateLimit.builder("x").requests(1, Duration.ofSeconds(1)).maxWait(Duration.ofNanos(-1))
        .build()).hasMessageContaining("maxWait is PT-0.000000001S");
    assertThatThrownBy(() -> CallWeight.tokens(-1)).hasMessage("CallWeight estimate is -1 tokens: give zero or more");
    RateLimit huge = RateLimit.builder("x").requests(Long.MAX_VALUE, Duration.ofNanos(1))
        .tokens(Long.MAX_VALUE, Duration.ofDays(366)).maxWait(Duration.ofSeconds(Long.MAX_VALUE)).build();
    StepVerifier.create(Mono.just(1).transformDeferred(throttledBy(huge, CallWeight.tokens(Long.MAX_VALUE / 2))))
        .expectNext(1).verifyComplete();
  }
}
