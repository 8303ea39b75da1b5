package io.breakwater.retry;

import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

class RetryWithBudgetTest {

  static final Duration VERIFY = Duration.ofSeconds(5);

  /** A deterministic policy: fixed 100 ms backoff, no per-kind bases, a budget that never refuses. */
  static RetryPolicy.Builder fixedPolicy() {
    return RetryPolicy.builder().name("test").backoff(Backoff.fixed(Duration.ofMillis(100)))
        .timeoutBase(Duration.ZERO).budget(RetryBudget.unlimited());
  }

  /** A call that fails with {@code errors} in turn, then answers "ok"; records when each attempt starts. */
  static final class Calls {
    final AtomicInteger count = new AtomicInteger();
    final List<Long> startedAtMillis = new CopyOnWriteArrayList<>();
    private final Throwable[] errors;
    private final Throwable always;

    Calls(Throwable... errors) {
      this.errors = errors;
      this.always = null;
    }

    private Calls(Throwable always, boolean unused) {
      this.errors = new Throwable[0];
      this.always = always;
    }

    /** A call that always fails with {@code error}. */
    static Calls failing(Throwable error) {
      return new Calls(error, true);
    }

    Mono<String> mono() {
      return Mono.defer(() -> {
        startedAtMillis.add(Schedulers.parallel().now(TimeUnit.MILLISECONDS));
        int n = count.getAndIncrement();
        if (always != null) {
          return Mono.error(always);
        }
        return n < errors.length ? Mono.error(errors[n]) : Mono.just("ok");
      });
    }
  }

  /** One failure, then "ok": the retry starts exactly {@code wait} after the first attempt. */
  private static void assertRetriedOnceAfter(Throwable failure, Duration wait) {
    Calls calls = new Calls(failure);
    StepVerifier.withVirtualTime(() -> calls.mono().transformDeferred(retryWithBudget(fixedPolicy().build())))
        .expectSubscription()
        .thenAwait(wait)
        .expectNext("ok")
        .verifyComplete();
    assertThat(calls.startedAtMillis).containsExactly(0L, wait.toMillis());
  }

  static HttpStatusException status(int status) {
    return new HttpStatusException(status);
  }

  static HttpStatusException status(int status, String header, String value) {
    return new HttpStatusException(status, Map.of(header, List.of(value)));
  }

  @Test
  void invalidArgumentGetsExactlyOneAttemptAndTheCallersOwnError() {
    IllegalArgumentException invalid = new IllegalArgumentException("bad city");
    Calls calls = new Calls(invalid);
    StepVerifier.withVirtualTime(() -> calls.mono().transformDeferred(retryWithBudget(fixedPolicy().build())))
        .expectErrorSatisfies(e -> assertThat(e).isSameAs(invalid))
        .verify(VERIFY);
    assertThat(calls.count).hasValue(1);
  }

  @Test
  void nonRetryableStatusesGetOneAttempt() {
    for (int code : new int[] {400, 401, 403, 404, 422}) {
      Calls calls = new Calls(status(code));
      StepVerifier.withVirtualTime(() -> calls.mono().transformDeferred(retryWithBudget(fixedPolicy().build())))
          .expectError(HttpStatusException.class)
          .verify(VERIFY);
      assertThat(calls.count).as("HTTP %d", code).hasValue(1);
    }
  }

  @Test
  void retryableFailuresAreRetriedAfterTheBackoff() {
    Calls calls = new Calls(status(503), new TimeoutException("slow"), new IOException("Connection reset by peer"));
    StepVerifier.withVirtualTime(() -> calls.mono().transformDeferred(retryWithBudget(fixedPolicy().build())))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(300))
        .expectNext("ok")
        .verifyComplete();
    assertThat(calls.startedAtMillis).containsExactly(0L, 100L, 200L, 300L);
  }

  @Test
  void maxRetriesEndsWithEveryAttemptListed() {
    HttpStatusException last = status(500);
    Calls calls = new Calls(status(502), status(503), status(504), last);
    StepVerifier.withVirtualTime(() -> calls.mono().transformDeferred(retryWithBudget(fixedPolicy().build())))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(300))
        .expectErrorSatisfies(e -> {
          RetryExhaustedException x = (RetryExhaustedException) e;
          assertThat(x.reason()).isEqualTo(RetryStopReason.MAX_RETRIES);
          assertThat(x.getCause()).isSameAs(last);
          assertThat(x.failureKind()).isEqualTo(FailureKind.SERVER_ERROR);
          assertThat(x.source()).isEqualTo("test");
          assertThat(x.attempts()).extracting(RetryAttempt::number).containsExactly(1, 2, 3, 4);
          assertThat(x.attempts()).extracting(RetryAttempt::delayBefore)
              .containsExactly(Duration.ZERO, Duration.ofMillis(100), Duration.ofMillis(100), Duration.ofMillis(100));
          assertThat(x.attempts()).extracting(a -> a.failedAt().toEpochMilli()).containsExactly(0L, 100L, 200L, 300L);
          assertThat(x.getMessage()).startsWith("Gave up on 'test' after 4 attempts: max retries reached")
              .contains("#2 server_error after 100ms");
        })
        .verify(VERIFY);
    assertThat(calls.count).hasValue(4);
  }

  @Test
  void defaultPolicyAllowsThreeRetries() {
    Calls calls = new Calls(status(503), status(503), status(503), status(503), status(503));
    StepVerifier.withVirtualTime(() -> calls.mono()
            .transformDeferred(retryWithBudget(Backoff.fixed(Duration.ofMillis(10)))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(1))
        .expectError(RetryExhaustedException.class)
        .verify(VERIFY);
    assertThat(calls.count).hasValue(4);
  }

  @Test
  void rateLimitedWaitsAtLeastFiveSeconds() {
    Calls calls = new Calls(status(429));
    StepVerifier.withVirtualTime(() -> calls.mono().transformDeferred(retryWithBudget(RetryPolicy.builder()
            .name("rate-limited").budget(RetryBudget.unlimited()).build())))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(5))
        .thenAwait(Duration.ofSeconds(10))
        .expectNext("ok")
        .verifyComplete();
    assertThat(calls.startedAtMillis.get(1)).isBetween(5_000L, 10_000L);
  }

  @Test
  void retryAfterSecondsIsHonoured() {
    Calls calls = new Calls(status(429, "Retry-After", "7"));
    StepVerifier.withVirtualTime(() -> calls.mono().transformDeferred(retryWithBudget(fixedPolicy().build())))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(6_999))
        .thenAwait(Duration.ofMillis(1))
        .expectNext("ok")
        .verifyComplete();
    assertThat(calls.startedAtMillis).containsExactly(0L, 7_000L);
  }

  /** Issue 26: the 5 s floor of rate limits applies only without a hint; the server's own wait is honoured. */
  @Test
  void retryAfterBelowTheRateLimitedBaseIsHonouredAsItIs() {
    Calls calls = new Calls(status(429, "Retry-After", "1"));
    StepVerifier.withVirtualTime(() -> calls.mono().transformDeferred(retryWithBudget(RetryPolicy.builder()
            .name("rate-limited").budget(RetryBudget.unlimited()).build())))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(999))
        .thenAwait(Duration.ofMillis(1))
        .expectNext("ok")
        .verifyComplete();
    assertThat(calls.startedAtMillis).containsExactly(0L, 1_000L);
  }

  @Test
  void retryAfterMsIsHonouredBeforeRetryAfter() {
    assertRetriedOnceAfter(new HttpStatusException(503,
        Map.of("retry-after-ms", List.of("1500"), "Retry-After", List.of("9"))), Duration.ofMillis(1500));
  }

  @Test
  void retryAfterHttpDateIsReadWithTheSchedulersClock() {
    // Virtual time starts at the epoch, so this date is 12 s after the first attempt.
    assertRetriedOnceAfter(status(503, "Retry-After", "Thu, 01 Jan 1970 00:00:12 GMT"), Duration.ofSeconds(12));
  }

  @Test
  void retryAfterIsCappedAtSixtySeconds() {
    assertRetriedOnceAfter(status(429, "Retry-After", "3600"), Duration.ofSeconds(60));
  }

  @Test
  void retryAfterBeyondTheDeadlineFailsAtOnce() {
    HttpStatusException throttled = status(429, "Retry-After", "30");
    Calls calls = new Calls(throttled);
    StepVerifier.withVirtualTime(() -> calls.mono()
            .transformDeferred(retryWithBudget(fixedPolicy().build()))
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectErrorSatisfies(e -> {
          assertThat(e).as("the deadline ends the call: a TimeoutException").isInstanceOf(DeadlineExceededException.class)
              .isInstanceOf(java.util.concurrent.TimeoutException.class)
              .hasMessageContaining("Retry-After asks to wait past the deadline");
          assertThat(e.getSuppressed()).as("the attempts' failures").containsExactly(throttled);
        })
        .verify(VERIFY);
    assertThat(calls.count).hasValue(1);
  }

  @Test
  void fiveSecondBackoffUnderOneSecondDeadlineMakesOneAttemptAndEndsByTheDeadline() {
    Calls calls = new Calls(status(503), status(503));
    StepVerifier.withVirtualTime(() -> calls.mono()
            .transformDeferred(retryWithBudget(fixedPolicy().backoff(Backoff.fixed(Duration.ofSeconds(5))).build()))
            .transformDeferred(withDeadline(Duration.ofSeconds(1))))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(DeadlineExceededException.class).hasMessageContaining("gave up after 1 attempt");
          assertThat(Schedulers.parallel().now(TimeUnit.MILLISECONDS)).as("virtual time at the error")
              .isLessThanOrEqualTo(1_000L);
        })
        .verify(VERIFY);
    assertThat(calls.count).hasValue(1);
  }

  @Test
  void noAttemptStartsWithLessThanTheMinimumUsefulTimeLeft() {
    // 900 ms deadline, 100 ms backoff: attempts at 0..700 leave ≥ 200 ms; after the one at 800 only 100 ms would be
    // left by the next start, below the 150 ms minimum.
    assertThat(startsUnderA900MillisecondDeadline(150)).last().isEqualTo(700L);
  }

  @Test
  void anAttemptThatStartsWithExactlyTheMinimumUsefulTimeLeftIsMade() {
    // 200 ms minimum: after the failure at 600 the next start (700) leaves exactly 200 ms, which is not less than the
    // minimum; after the one at 700, 100 ms would be left.
    assertThat(startsUnderA900MillisecondDeadline(200)).last().isEqualTo(700L);
  }

  /**
   * When each attempt started, in virtual milliseconds, for a call that always fails, retried every 100 ms under a
   * 900 ms deadline with the given minimum attempt time, until the deadline stops the retries.
   */
  private static List<Long> startsUnderA900MillisecondDeadline(long minAttemptMillis) {
    Calls calls = Calls.failing(status(503));
    StepVerifier.withVirtualTime(() -> calls.mono()
            .transformDeferred(retryWithBudget(fixedPolicy().maxRetries(20)
                .minAttemptTime(Duration.ofMillis(minAttemptMillis)).minAttemptShare(0).build()))
            .transformDeferred(withDeadline(Duration.ofMillis(900))))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(900))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(DeadlineExceededException.class)
            .hasMessageContaining("would not start with at least " + minAttemptMillis + "ms left"))
        .verify(VERIFY);
    return calls.startedAtMillis;
  }

  @Test
  void theDeadlineStillEndsAStalledAttempt() {
    StepVerifier.withVirtualTime(() -> Mono.never()
            .transformDeferred(retryWithBudget(fixedPolicy().build()))
            .transformDeferred(withDeadline(Duration.ofSeconds(2))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(2))
        .expectError(DeadlineExceededException.class)
        .verify(VERIFY);
  }

  @Test
  void eachAttemptGetsItsOwnCallBudgetAndTheLastStopsBeforeTheDeadline() {
    // 10 s task, per-call 0.6 × remaining, 100 ms backoff: attempts at 0, 6.1 and 8.54 s time out at 6, 8.44 and
    // 9.416 s; then 584 ms are left, less than the 100 ms delay + the useful minimum (a tenth of 10 s): no attempt
    // is made with 194 ms left, and the caller gets the deadline's TimeoutException with the three timeouts.
    StepVerifier.withVirtualTime(() -> Mono.never()
            .transformDeferred(io.breakwater.Breakwater.perCallTimeout())
            .transformDeferred(retryWithBudget(fixedPolicy().maxRetries(10).build()))
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(10))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(DeadlineExceededException.class)
              .hasMessageContaining("gave up after 3 attempts: the next attempt would not start with at least 1s left");
          assertThat(e.getSuppressed()).hasSize(3).allMatch(CallTimeoutException.class::isInstance);
          assertThat(Schedulers.parallel().now(TimeUnit.MILLISECONDS)).as("ended at the third timeout")
              .isEqualTo(9_416L);
        })
        .verify(VERIFY);
  }

  @Test
  void shouldRetryFalseForbidsARetry() {
    Calls calls = new Calls(status(503, "x-should-retry", "false"));
    StepVerifier.withVirtualTime(() -> calls.mono().transformDeferred(retryWithBudget(fixedPolicy().build())))
        .expectErrorSatisfies(e -> assertThat(((RetryExhaustedException) e).reason())
            .isEqualTo(RetryStopReason.SHOULD_NOT_RETRY))
        .verify(VERIFY);
    assertThat(calls.count).hasValue(1);
  }

  @Test
  void shouldRetryTrueIsStillRetried() {
    assertRetriedOnceAfter(status(503, "x-should-retry", "true"), Duration.ofMillis(100));
    assertRetriedOnceAfter(status(503, "x-should-retry", " TRUE "), Duration.ofMillis(100));
  }

  @Test
  void unknownFailureIsRetriedOnceThenTreatedAsNonRetryable() {
    Calls calls = new Calls(new IllegalStateException("odd"), new IllegalStateException("odd again"));
    StepVerifier.withVirtualTime(() -> calls.mono().transformDeferred(retryWithBudget(fixedPolicy().build())))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(100))
        .expectErrorSatisfies(e -> {
          RetryExhaustedException x = (RetryExhaustedException) e;
          assertThat(x.reason()).isEqualTo(RetryStopReason.NON_RETRYABLE);
          assertThat(x.failureKind()).isEqualTo(FailureKind.UNKNOWN);
          assertThat(x.attempts()).hasSize(2);
        })
        .verify(VERIFY);
    assertThat(calls.count).hasValue(2);
  }

  @Test
  void nonRetryableFailureAfterARetryEndsWithTheAttemptsListed() {
    Calls calls = new Calls(status(503), status(404));
    StepVerifier.withVirtualTime(() -> calls.mono().transformDeferred(retryWithBudget(fixedPolicy().build())))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(100))
        .expectErrorSatisfies(e -> {
          RetryExhaustedException x = (RetryExhaustedException) e;
          assertThat(x.reason()).isEqualTo(RetryStopReason.NON_RETRYABLE);
          assertThat(x.failureKind()).isEqualTo(FailureKind.CLIENT_ERROR);
        })
        .verify(VERIFY);
  }

  @Test
  void timeoutsUseAOneSecondBase() {
    RetryPolicy policy = RetryPolicy.builder().name("timeouts").budget(RetryBudget.unlimited())
        .backoff(Backoff.exponential(Duration.ofMillis(10), Duration.ofSeconds(30), 0.0)).build();
    Calls calls = new Calls(new TimeoutException("slow"), new TimeoutException("slow"), status(503));
    StepVerifier.withVirtualTime(() -> calls.mono().transformDeferred(retryWithBudget(policy)))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(4))
        .expectNext("ok")
        .verifyComplete();
    // timeout: 1 s; timeout: 2 s (second retry doubles); server error: the backoff's own 10 ms × 2² = 40 ms
    assertThat(calls.startedAtMillis).containsExactly(0L, 1_000L, 3_000L, 3_040L);
  }

  @Test
  void threeNestedLayersOfThreeRetriesMakeAtMostFourAttemptsAtTheBottom() {
    Calls bottom = Calls.failing(status(503));
    RetryPolicy layer = fixedPolicy().maxRetries(3).build();
    StepVerifier.withVirtualTime(() -> bottom.mono()
            .transformDeferred(retryWithBudget(layer))                       // tool client
            .flatMap(Mono::just)
            .transformDeferred(retryWithBudget(layer))                       // executor
            .map(s -> s)
            .transformDeferred(retryWithBudget(layer)))                      // planner
        .expectSubscription()
        .thenAwait(Duration.ofMinutes(1))
        .expectErrorSatisfies(e -> assertThat(((RetryExhaustedException) e).attempts()).hasSize(4))
        .verify(VERIFY);
    assertThat(bottom.count).hasValue(4);
  }

  @Test
  void anInnerExhaustionWrappedByUserCodeIsStillPassedThrough() {
    Calls bottom = Calls.failing(status(503));
    RetryPolicy layer = fixedPolicy().build();
    StepVerifier.withVirtualTime(() -> bottom.mono()
            .transformDeferred(retryWithBudget(layer))
            .onErrorMap(e -> new IllegalStateException("tool failed", e))
            .transformDeferred(retryWithBudget(layer)))
        .expectSubscription()
        .thenAwait(Duration.ofMinutes(1))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalStateException.class)
            .hasCauseInstanceOf(RetryExhaustedException.class))
        .verify(VERIFY);
    assertThat(bottom.count).hasValue(4);
  }

  @Test
  void successMakesNoTimerAndNoRetry() {
    io.breakwater.testing.TaskCountingScheduler counting =
        new io.breakwater.testing.TaskCountingScheduler(reactor.test.scheduler.VirtualTimeScheduler.create());
    StepVerifier.create(Mono.just("ok")
            .transformDeferred(retryWithBudget(fixedPolicy().scheduler(() -> counting).build())))
        .expectNext("ok")
        .verifyComplete();
    assertThat(counting.scheduledTasks()).isZero();
  }

  @Test
  void cancellationDuringBackoffDisposesTheTimerAndMakesNoFurtherAttempt() {
    reactor.test.scheduler.VirtualTimeScheduler vts = reactor.test.scheduler.VirtualTimeScheduler.create();
    io.breakwater.testing.TaskCountingScheduler counting = new io.breakwater.testing.TaskCountingScheduler(vts);
    Calls calls = new Calls(status(503));
    StepVerifier.create(calls.mono().transformDeferred(retryWithBudget(fixedPolicy()
            .backoff(Backoff.fixed(Duration.ofSeconds(1))).scheduler(() -> counting).build())))
        .expectSubscription()
        .then(() -> assertThat(counting.pendingTasks()).isEqualTo(1))
        .thenCancel()
        .verify(VERIFY);
    assertThat(counting.pendingTasks()).isZero();
    vts.advanceTimeBy(Duration.ofSeconds(5));
    assertThat(calls.count).hasValue(1);
  }

  @Test
  void maxRetriesZeroStillReportsWhyNoRetryWasMade() {
    Calls calls = new Calls(status(503));
    StepVerifier.withVirtualTime(() -> calls.mono()
            .transformDeferred(retryWithBudget(fixedPolicy().maxRetries(0).build())))
        .expectErrorSatisfies(e -> assertThat(((RetryExhaustedException) e).reason())
            .isEqualTo(RetryStopReason.MAX_RETRIES))
        .verify(VERIFY);
    assertThat(calls.count).hasValue(1);
  }

  @Test
  void policyIsValidatedWithMessagesThatSayWhatToChange() {
    org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
        .isThrownBy(() -> RetryPolicy.builder().maxRetries(-1).build())
        .withMessage("maxRetries is -1: give 0 (no retries) or more (e.g. 3)");
    org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
        .isThrownBy(() -> RetryPolicy.builder().name(" ").build())
        .withMessageContaining("name it after the dependency");
    org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
        .isThrownBy(() -> RetryPolicy.builder().rateLimitedBase(Duration.ofSeconds(90)).build())
        .withMessageContaining("exceeds retryAfterCap");
    org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
        .isThrownBy(() -> Backoff.fullJitter(Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .withMessageContaining("give a cap at least as long as the base");
    org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
        .isThrownBy(() -> Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(2), 1.5))
        .withMessageContaining("jitterFraction is 1.5");
  }
}
