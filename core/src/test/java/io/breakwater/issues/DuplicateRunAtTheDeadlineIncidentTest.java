package io.breakwater.issues;

import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.sideEffect;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.limit.ConcurrencyLimit;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Found by the composition suite (seed 35, case 83, shrunk): two callers of one key under the same 761 ms deadline,
 * the call behind a full {@code limitedBy}. At 761 ms the owner's deadline cancels it, which frees the key; the
 * waiting duplicate claims it and runs the call at that very instant, and the limit refuses it because the deadline
 * in force has passed. The duplicate's caller got that {@code LimitExceededException} at its deadline instead of the
 * {@code DeadlineExceededException} every call that its deadline ends gets.
 */
class DuplicateRunAtTheDeadlineIncidentTest {

  final VirtualTimeScheduler clock = VirtualTimeScheduler.getOrSet(true);

  @AfterEach
  void resetClock() {
    VirtualTimeScheduler.reset();
  }

  @Test
  void aCallThatAnInnerOperatorRefusesAtItsDeadlineInstantFailsWithTheDeadlinesTimeout() {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("search").fixed(1).scheduler(() -> clock).build();
    Disposable blocker = Mono.never().transformDeferred(limitedBy(limit)).subscribe();   // holds the one permit
    IdempotencyPolicy policy = IdempotencyPolicy.builder(IdempotencyStore.inMemory(1 << 20, () -> clock))
        .scheduler(() -> clock).build();
    AtomicReference<Throwable> owner = new AtomicReference<>();
    AtomicReference<Throwable> duplicate = new AtomicReference<>();

    call(limit, policy).subscribe(v -> { }, owner::set);
    call(limit, policy).subscribe(v -> { }, duplicate::set);
    clock.advanceTimeBy(Duration.ofMillis(761));

    assertThat(owner.get()).isInstanceOf(DeadlineExceededException.class);
    assertThat(duplicate.get()).as("the duplicate that ran at the deadline instant")
        .isInstanceOf(DeadlineExceededException.class);
    blocker.dispose();
  }

  private Mono<String> call(ConcurrencyLimit limit, IdempotencyPolicy policy) {
    return Mono.<String>never()
        .transformDeferred(limitedBy(limit))
        .transformDeferred(idempotentBy(IdempotencyKey.of("search", Map.of("q", "flights")), policy, String.class))
        .transformDeferred(sideEffect(SideEffect.READ_ONLY))
        .transformDeferred(withDeadline(DeadlineSpec.builder(Duration.ofMillis(761)).scheduler(() -> clock).build()));
  }
}
