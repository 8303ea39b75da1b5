package io.breakwater.internal.limit;

import static io.breakwater.Breakwater.throttledBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.HttpStatusException;
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
    return new SharedRateLimit(settings, new SharedSettings(Duration.ofMillis(500), Duration.ofSeconds(3),
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

  /** Runs a call that fails with {@code error} through {@code limit}. */
  private static final class StepVerifierless {
    static void error(RateLimit limit, Throwable error) {
      Mono.error(error).transformDeferred(throttledBy(limit)).subscribe(v -> {}, e -> {});
    }
  }
}
