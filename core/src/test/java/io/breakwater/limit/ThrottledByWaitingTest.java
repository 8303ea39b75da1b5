package io.breakwater.limit;

import static io.breakwater.Breakwater.throttledBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.internal.ContextKeys;
import io.breakwater.limit.LimitExceededException.Reason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.publisher.TestPublisher;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.context.Context;

/**
 * The in-memory {@code throttledBy}'s queue (docs/limits.md, "Rate limits"): who waits, when a waiter runs or is
 * refused, and how what a call gives back or a provider says moves the queue at once.
 */
class ThrottledByWaitingTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

  @AfterEach
  void stop() {
    clock.dispose();
  }

  /** A reply that carries its usage and the provider's headers. */
  record Reply(long tokens, Map<String, List<String>> headers) {}

  private RateLimit.Builder tokensPerMinute(long tokens) {
    return RateLimit.builder("openai").tokens(tokens, Duration.ofMinutes(1)).scheduler(() -> clock);
  }

  /** The times (virtual milliseconds) the calls ran at, and how the others ended. */
  private final List<Long> ranAt = new ArrayList<>();
  private final List<Throwable> errors = new ArrayList<>();

  private Disposable call(RateLimit rate, long tokens) {
    return call(rate, tokens, UnaryOperator.identity());
  }

  private Disposable call(RateLimit rate, long tokens, UnaryOperator<Context> context) {
    return Mono.fromCallable(() -> ranAt.add(clock.now(TimeUnit.MILLISECONDS)))
        .transformDeferred(throttledBy(rate, CallWeight.tokens(tokens)))
        .contextWrite(context::apply)
        .subscribe(v -> {}, errors::add);
  }

  /** A call of {@code tokens} that stays in flight until the test ends it. */
  private TestPublisher<Reply> inFlight(RateLimit rate, long tokens) {
    TestPublisher<Reply> call = TestPublisher.create();
    call.mono().transformDeferred(throttledBy(rate, CallWeight.tokens(tokens, Reply::tokens)
        .headers(Reply::headers))).subscribe(v -> {}, e -> {});
    return call;
  }

  private static Reason reason(Throwable e) {
    return ((LimitExceededException) e).reason();
  }

  @Test
  void aCallArrivingWhileOthersWaitQueuesBehindThemEvenWhenItsPermitsAreThere() {
    RateLimit rate = tokensPerMinute(1_000).maxWait(Duration.ofMinutes(1)).build();
    call(rate, 1_000);
    call(rate, 600);
    clock.advanceTimeBy(Duration.ofSeconds(6));
    call(rate, 50);   // 100 tokens are there, but the 600 wait first
    assertThat(ranAt).containsExactly(0L);
    assertThat(rate.queued()).isEqualTo(2);
    clock.advanceTimeBy(Duration.ofSeconds(33));
    assertThat(ranAt).containsExactly(0L, 36_000L, 39_000L);
  }

  @Test
  void aCallThatMayNotWaitIsRefusedAtOnceSayingWhy() {
    RateLimit noWait = tokensPerMinute(1_000).maxWait(Duration.ZERO).build();
    call(noWait, 1_000);
    call(noWait, 500);
    assertThat(errors).singleElement().satisfies(e -> {
      assertThat(reason(e)).isEqualTo(Reason.WOULD_WAIT_TOO_LONG);
      assertThat(((LimitExceededException) e).retryAfter()).contains(Duration.ofSeconds(30));
      assertThat(e).hasMessageEndingWith("in 30s, and it does not queue calls");
    });

    errors.clear();
    RateLimit noQueue = tokensPerMinute(1_000).maxQueue(0).build();
    call(noQueue, 1_000);
    call(noQueue, 500);
    assertThat(errors).singleElement().satisfies(e ->
        assertThat(e).hasMessageEndingWith("in 30s, and it does not queue calls"));

    errors.clear();
    RateLimit queueing = tokensPerMinute(1_000).build();
    call(queueing, 1_000);
    Deadline passed = Deadline.start(DeadlineSpec.builder(Duration.ofSeconds(1)).scheduler(() -> clock).build(),
        clock);
    clock.advanceTimeBy(Duration.ofSeconds(1));   // exactly at the deadline: no time left
    call(queueing, 500, ctx -> ctx.put(ContextKeys.DEADLINE, passed));
    assertThat(errors).singleElement().satisfies(e ->
        assertThat(e).hasMessageEndingWith("in 29s, and the deadline in force has passed"));
    assertThat(ranAt).containsExactly(0L, 0L, 0L);
    assertThat(queueing.queued()).isZero();
  }

  @Test
  void aFullQueueRefusesTheNextCallAtOnce() {
    RateLimit rate = tokensPerMinute(1_000).maxQueue(1).build();
    call(rate, 1_000);
    call(rate, 100);
    call(rate, 100);
    assertThat(rate.queued()).isEqualTo(1);
    assertThat(errors).singleElement().satisfies(e -> {
      assertThat(reason(e)).isEqualTo(Reason.QUEUE_FULL);
      assertThat(e).hasMessageEndingWith("1 calls already wait for requests unlimited, tokens 0/1000");
    });
  }

  @Test
  void aCallWhoseTurnComesExactlyAtItsMaxWaitQueuesAndRuns() {
    Duration interval = Duration.ofNanos(1L << 30);   // one request every 2^30 ns: exact in binary
    RateLimit rate = RateLimit.builder("crm").requests(1, interval).maxWait(interval).scheduler(() -> clock)
        .build();
    call(rate, 0);
    call(rate, 0);
    assertThat(errors).isEmpty();
    clock.advanceTime();
    clock.advanceTimeBy(interval);
    assertThat(ranAt).hasSize(2);
  }

  /** Issue 36 (security 2): a provider's lower limit lowers the cap for a while; it never makes a call impossible. */
  @Test
  void aWaiterHeavierThanTheProvidersLowerLimitKeepsWaitingForTheConfiguredLimit() {
    RateLimit rate = tokensPerMinute(1_000).maxWait(Duration.ofMinutes(1)).build();
    TestPublisher<Reply> first = inFlight(rate, 1_000);
    call(rate, 800);
    assertThat(rate.queued()).isEqualTo(1);
    first.emit(new Reply(1_000, Map.of("x-ratelimit-limit-tokens", List.of("500"))));
    assertThat(errors).as("not refused as too heavy: the configured limit comes back").isEmpty();
    assertThat(rate.queued()).isEqualTo(1);
  }

  @Test
  void aWaiterWhosePermitsCannotComeBeforeItsMaxWaitAfterA429IsRefusedWhenItRunsOut() {
    RateLimit rate = tokensPerMinute(1_000).maxWait(Duration.ofSeconds(40)).build();
    TestPublisher<Reply> first = inFlight(rate, 1_000);
    call(rate, 500);   // its turn: at 30 s
    first.error(new HttpStatusException(429, Map.of("retry-after", List.of("60"))));
    clock.advanceTimeBy(Duration.ofMillis(39_999));
    assertThat(errors).isEmpty();
    clock.advanceTimeBy(Duration.ofMillis(1));
    assertThat(errors).singleElement().satisfies(e -> {
      assertThat(reason(e)).isEqualTo(Reason.WAITED_TOO_LONG);
      assertThat(((LimitExceededException) e).retryAfter()).contains(Duration.ofSeconds(20));
      assertThat(e).hasMessageEndingWith("1 request and 500 tokens did not come within 40s (its maxWait; 0 calls "
          + "queued)");
    });
    assertThat(ranAt).isEmpty();
  }

  @Test
  void tokensAnOverEstimatedCallGivesBackLetAWaiterRunAtOnce() {
    RateLimit rate = tokensPerMinute(1_000).build();
    TestPublisher<Reply> first = inFlight(rate, 1_000);
    call(rate, 500);
    first.emit(new Reply(200, Map.of()));
    assertThat(ranAt).containsExactly(0L);
  }

  @Test
  void permitsACallRefusedBeforeTheWireGivesBackLetAWaiterRunAtOnce() {
    RateLimit rate = tokensPerMinute(1_000).build();
    TestPublisher<Reply> first = inFlight(rate, 1_000);
    call(rate, 500);
    first.error(new LimitExceededException("inner", Reason.QUEUE_FULL, null, "full"));
    assertThat(ranAt).containsExactly(0L);
  }

  @Test
  void permitsA429GivesBackLetAWaiterRunWhenItsRetryAfterIsOver() {
    RateLimit rate = tokensPerMinute(1_000).build();
    TestPublisher<Reply> first = inFlight(rate, 1_000);
    call(rate, 500);
    first.error(new HttpStatusException(429, Map.of("retry-after", List.of("0"), "x-ratelimit-limit-tokens",
        List.of("1000"), "x-ratelimit-remaining-tokens", List.of("1000"))));
    assertThat(ranAt).as("the provider did not count the refused call").containsExactly(0L);
  }

  @Test
  void a429ThatLeavesPermitsStillStopsEveryCallUntilItsRetryAfter() {
    RateLimit rate = RateLimit.builder("openai").requests(60, Duration.ofMinutes(1)).scheduler(() -> clock).build();
    inFlight(rate, 0).error(new HttpStatusException(429, Map.of("retry-after", List.of("5"),
        "x-ratelimit-limit-requests", List.of("60"), "x-ratelimit-remaining-requests", List.of("60"))));
    assertThat(rate.availableRequests()).as("the provider still had them all").isEqualTo(60);
    clock.advanceTimeBy(Duration.ofSeconds(1));
    call(rate, 0);
    assertThat(ranAt).isEmpty();
    clock.advanceTimeBy(Duration.ofSeconds(4));
    assertThat(ranAt).containsExactly(5_000L);
  }

  @Test
  void whenTheHeadOfTheQueueLeavesTheNextRunsAsSoonAsItsOwnPermitsAreThere() {
    RateLimit rate = tokensPerMinute(1_000).maxWait(Duration.ofMinutes(1)).build();
    call(rate, 1_000);
    Disposable head = call(rate, 900);
    call(rate, 100);
    clock.advanceTimeBy(Duration.ofSeconds(1));
    head.dispose();
    clock.advanceTimeBy(Duration.ofSeconds(5));
    assertThat(ranAt).as("100 tokens refill in 6 s").containsExactly(0L, 6_000L);
  }

  @Test
  void aCallThatUsedNoTokensGivesItsWholeEstimateBack() {
    RateLimit rate = tokensPerMinute(1_000).build();
    inFlight(rate, 400).emit(new Reply(0, Map.of()));
    assertThat(rate.availableTokens()).isEqualTo(1_000);
  }

  @Test
  void aStreamThatFailsAfterCarryingAUsageFigureIsCorrectedByIt() {
    RateLimit rate = tokensPerMinute(1_000).build();
    Flux.just(new Reply(100, Map.of())).concatWith(Flux.error(new IllegalStateException("reset")))
        .transformDeferred(throttledBy(rate, CallWeight.tokens(600, Reply::tokens))).subscribe(v -> {}, e -> {});
    assertThat(rate.availableTokens()).isEqualTo(900);
  }

  @Test
  void aServerErrorsRateLimitHeadersLowerTheBucketsWithoutStoppingCalls() {
    RateLimit rate = tokensPerMinute(1_000).build();
    inFlight(rate, 100).error(new HttpStatusException(503, Map.of("x-ratelimit-remaining-tokens", List.of("300"))));
    assertThat(rate.availableTokens()).isEqualTo(300);
    call(rate, 300);
    assertThat(ranAt).containsExactly(0L);
  }

  @Test
  void itsTextSaysWhatTheBucketsHoldWhatWaitsAndHowLong() {
    RateLimit rate = RateLimit.builder("openai").requests(10, Duration.ofMinutes(1)).maxWait(Duration.ofSeconds(5))
        .maxQueue(7).providerHeaders(ProviderRateLimits.openAi()).scheduler(() -> clock).build();
    call(rate, 0);
    assertThat(rate).hasToString("RateLimit{openai, requests 9/10, tokens unlimited, queued 0, maxWait 5s, "
        + "maxQueue 7, ProviderRateLimits.openAi()}");
  }

  @Test
  void aMaxWaitOfCenturiesStillAppearsInItsText() {
    RateLimit rate = RateLimit.builder("batch").requests(10, Duration.ofMinutes(1))
        .maxWait(Duration.ofDays(365L * 300)).scheduler(() -> clock).build();
    assertThat(rate.toString()).contains("maxWait 2628000h,");
  }
}
