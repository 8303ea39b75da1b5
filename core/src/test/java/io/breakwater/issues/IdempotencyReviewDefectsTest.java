package io.breakwater.issues;

import static io.breakwater.Breakwater.idempotentBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.FailureKind;
import io.breakwater.idempotency.CachedFailureException;
import io.breakwater.idempotency.DelegatingStore;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyLimitException;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Issue 14, defects 1 to 3: what an independent review found in {@code idempotentBy}, each from its scenario. Each
 * test failed on the code before its fix.
 */
class IdempotencyReviewDefectsTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
  private final IdempotencyStore store = IdempotencyStore.inMemory(16L << 20, () -> clock);
  private final AtomicInteger refunds = new AtomicInteger();
  private final IdempotencyKey key = IdempotencyKey.explicit("payments.refund", "order-42", Map.of("amount", 30));

  /** A refund receipt that Jackson cannot write: no properties ({@code FAIL_ON_EMPTY_BEANS}). */
  static final class OpaqueReceipt {
    @Override
    public String toString() {
      return "receipt";
    }
  }

  /**
   * Defect 1: the refund ran, but its result could not be written as JSON, and the key was freed as if nothing had
   * run: a second call refunded again (2 refunds). Now the refusal is stored, as for an oversized result.
   */
  @Test
  void aResultThatCannotBeWrittenAsJsonNeverFreesTheKeySoTheRefundRunsOnce() {
    IdempotencyPolicy policy = IdempotencyPolicy.builder(store).scheduler(() -> clock).build();
    Mono<OpaqueReceipt> refund = Mono.fromCallable(() -> {
      refunds.incrementAndGet();
      return new OpaqueReceipt();
    });

    StepVerifier.create(refund.transformDeferred(idempotentBy(key, policy, OpaqueReceipt.class)))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IdempotencyLimitException.class)
            .hasMessageContaining("cannot be written as JSON")
            .hasMessageContaining("The call ran once"))
        .verify();
    StepVerifier.create(refund.transformDeferred(idempotentBy(key, policy, OpaqueReceipt.class)))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(CachedFailureException.class).hasMessageContaining("cannot be written as JSON");
          assertThat(((CachedFailureException) e).failureKind()).isEqualTo(FailureKind.MISCONFIGURED);
        })
        .verify();
    assertThat(refunds).as("refunds run").hasValue(1);
  }

  /**
   * Defect 2: the claim's reply arrives 5 ms late and the caller cancels at 1 ms. The store has applied the claim,
   * but the reply was dropped and nothing released it: the next caller got IdempotencyInFlightException for the
   * whole lease. Now a claim granted after a cancel is released at once.
   */
  @Test
  void anOwnerCancelledWhileItsClaimsReplyIsOnTheWayReleasesTheClaim() {
    IdempotencyStore lateReplies = new DelegatingStore(store) {
      @Override
      public Mono<Claim> claim(String key, String fingerprint, String owner, Duration lease) {
        return super.claim(key, fingerprint, owner, lease).delayElement(Duration.ofMillis(5), clock);
      }
    };
    IdempotencyPolicy policy = IdempotencyPolicy.builder(lateReplies).keySecret(DelegatingStore.SECRET)
        .scheduler(() -> clock)
        .failFastWhenInFlight().lease(Duration.ofMinutes(5)).build();
    Mono<String> refund = Mono.fromCallable(() -> "refund-" + refunds.incrementAndGet())
        .transformDeferred(idempotentBy(key, policy, String.class));

    Disposable cancelled = refund.subscribe();
    clock.advanceTimeBy(Duration.ofMillis(1));
    cancelled.dispose();
    clock.advanceTimeBy(Duration.ofMillis(10));

    List<String> next = new ArrayList<>();
    refund.subscribe(next::add, e -> next.add(e.getClass().getSimpleName()));
    clock.advanceTimeBy(Duration.ofMillis(10));
    assertThat(next).as("the next caller runs the refund instead of waiting out a 5 min lease")
        .containsExactly("refund-1");
  }

  /**
   * Defect 3: a waiting duplicate nested one operator level per poll, and died with StackOverflowError after a few
   * thousand polls (an owner running one hour with the default 1 s poll). Now the stack is as deep after 100 000
   * polls as after one.
   */
  @Test
  void aDuplicateWaitingOneHundredThousandPollsKeepsAConstantStackAndGetsTheOwnersResult() {
    AtomicInteger claims = new AtomicInteger();
    IdempotencyStore counting = new DelegatingStore(store) {
      @Override
      public Mono<Claim> claim(String key, String fingerprint, String owner, Duration lease) {
        claims.incrementAndGet();
        return super.claim(key, fingerprint, owner, lease);
      }

      @Override
      public Mono<Void> changed(String key) {
        return Mono.never();       // a store that cannot notify: the duplicate polls
      }
    };
    IdempotencyPolicy policy = IdempotencyPolicy.builder(counting).keySecret(DelegatingStore.SECRET)
        .scheduler(() -> clock)
        .pollInterval(Duration.ofSeconds(1)).build();
    Duration ownerRuns = Duration.ofSeconds(100_000);
    List<String> results = new ArrayList<>();
    Mono.delay(ownerRuns, clock).map(x -> "refund-" + refunds.incrementAndGet())
        .transformDeferred(idempotentBy(key, policy, String.class)).subscribe(results::add);
    Mono.fromCallable(() -> "refund-" + refunds.incrementAndGet())
        .transformDeferred(idempotentBy(key, policy, String.class))
        .subscribe(results::add, e -> results.add(e.getClass().getSimpleName()));

    clock.advanceTimeBy(ownerRuns.plusSeconds(2));

    assertThat(results).containsExactly("refund-1", "refund-1");
    assertThat(claims.get()).as("claims: the owner's, then one per poll").isGreaterThan(100_000);
  }
}
