package io.breakwater.idempotency;

import static io.breakwater.Breakwater.idempotentBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.testing.TaskCountingScheduler;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The timers {@code idempotentBy} arms on its policy's scheduler. A store call that answers while it is subscribed
 * (the in-memory store's) cannot outlive a bound, so it gets no timer: a hit arms none, and a miss only the owner's
 * lease renewal. Every armed timer is a task on a scheduler's queue (on {@code Schedulers.parallel()}, a lock taken
 * and often a worker thread woken), which made the in-memory miss cost tens of microseconds.
 */
class StoreTimersTest {

  @Test
  void onTheInMemoryStoreAHitArmsNoTimerAndAMissOnlyItsLeaseRenewal() {
    TaskCountingScheduler clock = new TaskCountingScheduler(VirtualTimeScheduler.create());
    IdempotencyPolicy policy = IdempotencyPolicy.builder(IdempotencyStore.inMemory(16L << 20, () -> clock))
        .scheduler(() -> clock).build();
    Mono<Integer> call = Mono.just(42)
        .transformDeferred(idempotentBy(IdempotencyKey.explicit("orders.place", "o-1", Map.of()), policy,
            Integer.class));

    StepVerifier.create(call).expectNext(42).verifyComplete();
    assertThat(clock.scheduledTasks()).as("timers armed by a miss").isEqualTo(1);
    assertThat(clock.pendingTasks()).as("timers left pending after the miss").isZero();

    StepVerifier.create(call).expectNext(42).verifyComplete();
    assertThat(clock.scheduledTasks()).as("timers armed by a miss and a hit").isEqualTo(1);
  }
}
