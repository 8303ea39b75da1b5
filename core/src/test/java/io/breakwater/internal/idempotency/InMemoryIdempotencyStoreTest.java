package io.breakwater.internal.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.breakwater.idempotency.IdempotencyStore.Acquired;
import io.breakwater.idempotency.IdempotencyStore.Busy;
import io.breakwater.idempotency.IdempotencyStore.Outcome;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

class InMemoryIdempotencyStoreTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(1L << 20, () -> clock);

  /** Issue 15 (low): 100 000 waiter entries were left after 100 000 calls whose changed() returned at once. */
  @Test
  void changedThatAnswersAtOnceLeavesNoWaiterEntry() {
    store.claim("done", "fp", "owner", Duration.ofMinutes(1)).block();
    store.complete("done", "owner", Outcome.success("1"), Duration.ofHours(1)).block();
    for (int i = 0; i < 100_000; i++) {
      store.changed(i % 2 == 0 ? "done" : "never-claimed-" + i).block();
    }
    assertThat(store.waitingKeys()).isZero();
  }

  /**
   * Issue 14, "also verify": a waiter of a key that never changes (its owner crashed, the waiter gave up) left its
   * entry behind for good. Now the entry goes when the record leaves the cache.
   */
  @Test
  void waitersOfAKeyThatNeverChangesAreForgottenWhenItsRecordExpires() {
    assertThat(store.claim("crashed", "fp", "owner", Duration.ofSeconds(10)).block()).isEqualTo(new Acquired(false));
    Disposable waiter = store.changed("crashed").subscribe();
    assertThat(store.waitingKeys()).isOne();
    waiter.dispose();

    clock.advanceTimeBy(Duration.ofSeconds(21));      // the in-flight record is kept 2 leases, then expires
    store.cleanUp();
    assertThat(store.waitingKeys()).isZero();
  }

  @Test
  void renewalExtendsOnlyTheOwnersLease() {
    store.claim("k", "fp", "owner", Duration.ofSeconds(10)).block();
    clock.advanceTimeBy(Duration.ofSeconds(8));
    assertThat(store.renew("k", "other", Duration.ofSeconds(10)).block()).isFalse();
    assertThat(store.renew("k", "owner", Duration.ofSeconds(10)).block()).isTrue();
    clock.advanceTimeBy(Duration.ofSeconds(8));
    assertThat(store.claim("k", "fp", "other", Duration.ofSeconds(10)).block())
        .isEqualTo(new Busy(Duration.ofSeconds(2)));
  }

  @Test
  void aCompletionResentAfterItWasStoredStillAnswersStored() {
    store.claim("k", "fp", "owner", Duration.ofSeconds(10)).block();
    assertThat(store.complete("k", "owner", Outcome.success("1"), Duration.ofHours(1)).block()).isTrue();
    assertThat(store.complete("k", "owner", Outcome.success("1"), Duration.ofHours(1)).block()).isTrue();
    assertThat(store.complete("k", "other", Outcome.success("2"), Duration.ofHours(1)).block()).isFalse();
  }

  /** Issue 15 (low): the store bounded entries, not bytes; a few large results could hold any amount of memory. */
  @Test
  void recordsAreWeighedByTheirBytesAndStayUnderTheBound() {
    String large = "x".repeat(100_000);      // about 200 KB each, as the JVM may hold it
    for (int i = 0; i < 50; i++) {
      store.claim("k" + i, "fp", "owner", Duration.ofSeconds(10)).block();
      store.complete("k" + i, "owner", Outcome.success(large), Duration.ofHours(1)).block();
    }
    store.cleanUp();
    assertThat(store.weightedBytes()).isLessThanOrEqualTo(1L << 20);
    assertThat(store.weightedBytes()).isGreaterThan(800_000L);
  }

  @Test
  void leasesAndTtlsNearLongMaxSaturateInsteadOfOverflowing() {
    assertThat(store.claim("k", "fp", "owner", Duration.ofSeconds(Long.MAX_VALUE)).block())
        .isEqualTo(new Acquired(false));
    assertThat(store.claim("k", "fp", "other", Duration.ofSeconds(1)).block()).isInstanceOf(Busy.class);
    assertThat(store.complete("k", "owner", Outcome.success("1"), Duration.ofSeconds(Long.MAX_VALUE)).block())
        .isTrue();
    clock.advanceTimeBy(Duration.ofDays(365));
    assertThat(store.claim("k", "fp", "other", Duration.ofSeconds(1)).block())
        .isEqualTo(new io.breakwater.idempotency.IdempotencyStore.Done(Outcome.success("1")));
  }

  @Test
  void aBoundBelowOneMebibyteIsRefusedAsProbablyACountOfKeys() {
    assertThatIllegalArgumentException().isThrownBy(() -> new InMemoryIdempotencyStore(100_000, () -> clock))
        .withMessageContaining("bounded by the bytes").withMessageContaining("at least 1 MiB");
  }
}
