package io.breakwater.idempotency;

import static io.breakwater.Breakwater.idempotentBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.internal.idempotency.BackgroundCompletions;
import io.breakwater.testing.idempotency.BackgroundOutcomeTracker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * A caller gets its value before its outcome is stored, but never more than {@code maxBackgroundCompletions} such
 * outcomes are being stored at once: beyond that, the caller's value waits for its own. Here claims answer at once
 * and every completion takes 10 ms, so callers that loop would otherwise start completions without end.
 */
class BackgroundCompletionsBoundTest {

  private static final Duration COMPLETE_TAKES = Duration.ofMillis(10);
  private static final int CALLERS = 32;
  private static final int CALLS = 2_000;

  /** Completions that take 10 ms of (virtual) time; everything else as the in-memory store does it. */
  private static IdempotencyStore slowCompletions(BackgroundOutcomeTracker tracker) {
    return tracker.watch(new DelegatingStore(IdempotencyStore.inMemory(64L << 20, Schedulers::parallel)) {
      @Override
      public Mono<Boolean> complete(String key, String owner, Outcome outcome, Duration ttl) {
        return Mono.delay(COMPLETE_TAKES).then(super.complete(key, owner, outcome, ttl));
      }
    });
  }

  private static IdempotencyPolicy policy(BackgroundOutcomeTracker tracker, int maxBackgroundCompletions) {
    return IdempotencyPolicy.builder(slowCompletions(tracker))
        .keySecret(DelegatingStore.SECRET)
        .maxBackgroundCompletions(maxBackgroundCompletions)
        .build();
  }

  private static IdempotencyKey key(int i) {
    return IdempotencyKey.explicit("orders.place", "order-" + i, i);
  }

  @Test
  void sustainedMissesNeverStoreMoreOutcomesInTheBackgroundThanTheBound() {
    BackgroundOutcomeTracker tracker = new BackgroundOutcomeTracker();
    IdempotencyPolicy policy = policy(tracker, 8);
    AtomicInteger executions = new AtomicInteger();
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();

    StepVerifier.withVirtualTime(() -> Flux.range(0, CALLS)
            .flatMap(i -> Mono.fromCallable(() -> {
                  executions.incrementAndGet();
                  return i;
                })
                .transformDeferred(idempotentBy(key(i), policy, Integer.class))
                .doOnNext(value -> tracker.delivered(policy.storeKey(key(i)))), CALLERS)
            .count(), () -> clock, Long.MAX_VALUE)
        .thenAwait(COMPLETE_TAKES.multipliedBy(CALLS))
        .expectNext((long) CALLS)
        .verifyComplete();

    assertThat(executions).hasValue(CALLS);
    assertThat(tracker.most()).as("outcomes being stored after their callers got their values")
        .isPositive().isLessThanOrEqualTo(8);
    assertThat(BackgroundCompletions.of(policy).running()).isZero();
    // every outcome was stored: a second round replays them all without running anything
    StepVerifier.withVirtualTime(() -> Flux.range(0, CALLS)
            .flatMap(i -> Mono.fromCallable(executions::incrementAndGet)
                .transformDeferred(idempotentBy(key(i), policy, Integer.class)), CALLERS)
            .reduce(0L, (sum, value) -> sum + value), () -> clock, Long.MAX_VALUE)
        .thenAwait(COMPLETE_TAKES)
        .expectNext((long) CALLS * (CALLS - 1) / 2)
        .verifyComplete();
    assertThat(executions).hasValue(CALLS);
  }

  @Test
  void aCallerBeyondTheBoundGetsItsValueOnceItsOutcomeIsStored() {
    BackgroundOutcomeTracker tracker = new BackgroundOutcomeTracker();
    IdempotencyPolicy policy = policy(tracker, 0);

    StepVerifier.withVirtualTime(() -> Mono.just("booked").transformDeferred(idempotentBy(key(1), policy,
            String.class)))
        .expectSubscription()
        .expectNoEvent(COMPLETE_TAKES.minusMillis(1))
        .thenAwait(Duration.ofMillis(1))
        .expectNext("booked")
        .verifyComplete();
  }

  @Test
  void aCallerThatStopsWaitingLeavesItsOutcomeBeingStored() {
    BackgroundOutcomeTracker tracker = new BackgroundOutcomeTracker();
    IdempotencyPolicy policy = policy(tracker, 0);
    AtomicInteger executions = new AtomicInteger();
    Mono<Integer> book = Mono.fromCallable(executions::incrementAndGet);

    VirtualTimeScheduler clock = VirtualTimeScheduler.create();

    // the first caller stops waiting half-way through its completion; a duplicate comes after it would have ended
    StepVerifier.withVirtualTime(() -> book.transformDeferred(idempotentBy(key(1), policy, Integer.class))
            .take(COMPLETE_TAKES.dividedBy(2))
            .then(Mono.delay(COMPLETE_TAKES))
            .then(book.transformDeferred(idempotentBy(key(1), policy, Integer.class))))
        .thenAwait(COMPLETE_TAKES.multipliedBy(2))
        .expectNext(1)
        .verifyComplete();
    assertThat(executions).hasValue(1);
  }

  @Test
  void aNegativeBoundIsRefusedWithWhatToGive() {
    assertThatThrownBy(() -> IdempotencyPolicy.builder(IdempotencyStore.inMemory()).maxBackgroundCompletions(-1)
        .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxBackgroundCompletions is -1: give 0 or more (0: every caller waits for its outcome to be "
            + "stored)");
  }
}
