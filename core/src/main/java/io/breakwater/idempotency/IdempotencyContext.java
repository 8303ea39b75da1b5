package io.breakwater.idempotency;

import io.breakwater.internal.ContextKeys;
import java.time.Duration;
import java.util.Optional;
import reactor.util.context.ContextView;

/**
 * What the call running inside {@code idempotentBy} holds: its key, its owner token, whether its claim took over an
 * expired one, and how much of its lease is left. Read it from the Reactor Context of the call, before doing
 * something that cannot be undone:
 *
 * <pre>{@code
 * Mono<Receipt> refund = Mono.deferContextual(ctx -> {
 *   IdempotencyContext claim = IdempotencyContext.current(ctx).orElseThrow();
 *   if (claim.tookOverExpired()) {
 *     return payments.findRefund(order.id())                 // a previous owner may have refunded, then crashed
 *         .switchIfEmpty(Mono.defer(() -> payments.refund(order)));
 *   }
 *   return claim.stillOwner() ? payments.refund(order) : Mono.error(new IllegalStateException("lease lost"));
 * });
 * refund.transformDeferred(idempotentBy(key, policy, Receipt.class));
 * }</pre>
 *
 * <p>The lease is renewed every third of its length while the call runs. {@link #stillOwner()} turns {@code false}
 * as soon as the claim is known to be lost (the store answered that another owner holds it, or the call was
 * cancelled) or is at risk: when less than a third of the lease is left, at least one renewal has failed (the store is
 * unreachable, or this process was frozen), and another instance may take the key over when the lease ends. Times are
 * measured from when each claim or renewal was <i>sent</i>, so the local view never outlasts the store's. Thread-safe.
 */
public interface IdempotencyContext {

  /** The claim held by the call this Context belongs to, if it runs inside {@code idempotentBy} as its owner. */
  static Optional<IdempotencyContext> current(ContextView context) {
    return Optional.ofNullable(context.getOrDefault(ContextKeys.IDEMPOTENCY_CONTEXT, null));
  }

  /** The idempotency key of the call. */
  IdempotencyKey key();

  /** The random token that fences this owner's completion and release in the store. */
  String ownerToken();

  /**
   * Whether this claim took over one whose lease had expired: a previous owner may have run the side effect and died
   * before recording it. Ask the downstream system what happened before doing it again.
   */
  boolean tookOverExpired();

  /** The lease left, as last confirmed by the store (zero when it has run out or the claim was lost). */
  Duration leaseRemaining();

  /** Whether the claim is still held and safe: not lost, not cancelled, and more than a third of the lease left. */
  boolean stillOwner();

  /**
   * Records that a request of this call went out carrying the idempotency key. {@link io.breakwater.http
   * .IdempotencyKeyHeader} and {@code BreakwaterExchangeFilter} call it for you; call it from a client of your own
   * when it sends the key (its keyed form, {@link IdempotencyPolicy#sentKey}, never {@link IdempotencyKey#value()}).
   * A {@link SideEffect#DEDUPLICATED_WRITE} is re-sent only after attempts that sent it.
   */
  default void markKeySent() {}

  /** How many requests of this call were marked as carrying the key ({@link #markKeySent()}). */
  default int keysSent() {
    return 0;
  }
}
