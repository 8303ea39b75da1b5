package io.breakwater.examples.idempotency;

import static io.breakwater.Breakwater.idempotentBy;

import io.breakwater.idempotency.IdempotencyContext;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.UnrecordedOutcome;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import reactor.core.publisher.Mono;

/**
 * A refund whose side effect reads its claim: it asks the payment system first when it took over a claim whose
 * owner died, and refuses to pay on a claim it may have lost. The snippets of {@code docs/idempotency.md};
 * {@code ClaimAwareRefundsTest} runs them.
 */
public final class ClaimAwareRefunds {

  // snippet:domain-refund-api
  /** The payment system: a refund, and a look-up of a refund already made under a key. */
  public interface RefundApi {
    Mono<String> refund(String orderId, String idempotencyKey);

    Mono<String> findRefund(String idempotencyKey);
  }
  // end-snippet

  private final RefundApi payments;
  private final IdempotencyPolicy policy;
  private final List<UnrecordedOutcome> unrecorded = new CopyOnWriteArrayList<>();

  public ClaimAwareRefunds(RefundApi payments, IdempotencyStore store, byte[] keySecret) {
    this.payments = payments;
    this.policy = policy(store, keySecret, unrecorded);
  }

  // snippet:idempotency-policy-secret
  static IdempotencyPolicy policy(IdempotencyStore store, byte[] keySecret, List<UnrecordedOutcome> unrecorded) {
    return IdempotencyPolicy.builder(store)
        .keySecret(keySecret)                      // 32+ random bytes, the same on every instance
        .onUnrecorded(unrecorded::add)             // an outcome that could not be stored: alert on it
        .build();
  }
  // end-snippet

  public Mono<String> refund(String orderId) {
    return refund(payments, policy, orderId);
  }

  // snippet:idempotency-context
  static Mono<String> refund(RefundApi payments, IdempotencyPolicy policy, String orderId) {
    IdempotencyKey key = IdempotencyKey.explicit("payments.refund", orderId, orderId);
    Mono<String> refund = Mono.deferContextual(ctx -> {
      IdempotencyContext claim = IdempotencyContext.current(ctx).orElseThrow();
      String downstreamKey = policy.sentKey(key);             // the payment API deduplicates on it too
      if (!claim.stillOwner()) {
        return Mono.error(new IllegalStateException("lease at risk: not paying"));   // a retry asks again
      }
      if (claim.tookOverExpired()) {                          // the previous owner may have paid, then died
        return payments.findRefund(downstreamKey)
            .switchIfEmpty(Mono.defer(() -> payments.refund(orderId, downstreamKey)));
      }
      return payments.refund(orderId, downstreamKey);
    });
    return refund.transformDeferred(idempotentBy(key, policy, String.class));
  }
  // end-snippet

  /** Outcomes that could not be stored so far. */
  public List<UnrecordedOutcome> unrecorded() {
    return List.copyOf(unrecorded);
  }
}
