package io.breakwater.internal.limit;

import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.throttledBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.FailureClassifier;
import io.breakwater.limit.CallWeight;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.ProviderRateLimits;
import io.breakwater.limit.RateLimit;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.util.RaceTestUtils;

/**
 * A shared limit's answer from its store racing the caller's cancellation, on two threads: whichever comes first, the
 * permit (or the tokens taken) come back exactly once. The grant and what its return needs used to be set in two
 * steps, and a cancellation between them found nothing to give back: the CI saw a permit of the Redis limit stay taken
 * ({@code RedisConcurrencyLimitIT.cancellingRacingCallsReturnsEveryPermit}).
 */
class SharedLimitGrantRaceTest {

  private static final int ROUNDS = 20_000;

  private final Scheduler clock = Schedulers.newSingle("grant-race-clock");

  @AfterEach
  void stop() {
    clock.dispose();
  }

  @Test
  void aConcurrencyPermitAnsweredWhileItsCallerLeavesIsGivenBackExactlyOnce() {
    AnsweringPermitStore store = new AnsweringPermitStore();
    ConcurrencyLimit limit = ConcurrencyEngine.shared(new ConcurrencySettings("search", 1, null,
        Duration.ofSeconds(30), 10, FailureClassifier.defaults(), () -> clock),
        new SharedSettings(Duration.ofSeconds(30), Duration.ofSeconds(30), Duration.ofSeconds(30), true), store);
    for (int round = 0; round < ROUNDS; round++) {
      Disposable caller = Mono.never().transformDeferred(limitedBy(limit)).subscribe();
      assertThat(store.pending).as("round %d asked the store", round).hasSize(1);
      RaceTestUtils.race(store::grantOldest, caller::dispose);
      assertThat(limit.inFlight()).as("round %d: in flight after the caller left", round).isZero();
      assertThat(store.held).as("round %d: permits still held in the store", round).isEmpty();
    }
    assertThat(limit.queued()).isZero();
  }

  @Test
  void tokensTakenWhileTheirCallerLeavesAreSpentOnTheCallOrSettledAsNeverSent() {
    RateSettings settings = new RateSettings("openai", 1_000_000, Duration.ofMinutes(1), 1_000_000_000,
        Duration.ofMinutes(1), ProviderRateLimits.all(), Duration.ofSeconds(30), 10, () -> clock);
    TakenByTheTest store = new TakenByTheTest(new FakeBucketStore(clock, settings));
    RateLimit limit = RateEngine.shared(settings, new SharedSettings(Duration.ofSeconds(30), Duration.ofSeconds(30),
        Duration.ofSeconds(30), true), store);
    AtomicInteger sent = new AtomicInteger();
    Mono<Object> call = Mono.never().doOnSubscribe(s -> sent.incrementAndGet());
    for (int round = 0; round < ROUNDS; round++) {
      Disposable caller = call.transformDeferred(throttledBy(limit, CallWeight.tokens(10))).subscribe();
      Sinks.One<BucketStore.Taken> answer = store.pending.getAndSet(null);
      assertThat(answer).as("round %d asked the store", round).isNotNull();
      BucketStore.Taken taken = store.takeNow(10);
      RaceTestUtils.race(() -> answer.tryEmitValue(taken), caller::dispose);
      assertThat(sent.get() + store.neverSent.get())
          .as("round %d: calls sent, plus calls never sent whose tokens were settled", round).isEqualTo(round + 1);
    }
  }

  /** Buckets whose {@code take} the test answers; counts the settlements of calls never sent. */
  private static final class TakenByTheTest implements BucketStore {
    final AtomicReference<Sinks.One<Taken>> pending = new AtomicReference<>();
    final AtomicInteger neverSent = new AtomicInteger();
    private final FakeBucketStore buckets;

    TakenByTheTest(FakeBucketStore buckets) {
      this.buckets = buckets;
    }

    Taken takeNow(long tokens) {
      return buckets.take(tokens).block();
    }

    @Override
    public Mono<Taken> take(long tokens) {
      Sinks.One<Taken> answer = Sinks.one();
      pending.set(answer);
      return answer.asMono();
    }

    @Override
    public Mono<Void> settle(Settlement settlement) {
      if (settlement.outcome() == Outcome.NEVER_SENT) {
        neverSent.incrementAndGet();
      }
      return buckets.settle(settlement);
    }
  }
}
