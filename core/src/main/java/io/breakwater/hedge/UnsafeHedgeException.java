package io.breakwater.hedge;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.Refusal;

/**
 * Signalled at subscription, before any call is made, when {@code hedgedBy} guards a write that a backup attempt
 * could repeat: a {@link io.breakwater.idempotency.SideEffect#NON_IDEMPOTENT_WRITE} (declared, or a call inside
 * {@code idempotentBy} that declares nothing), inside {@code idempotentBy} or not (the claim is taken once, and the
 * backup is sent while the first attempt may be processed), or a
 * {@link io.breakwater.idempotency.SideEffect#DEDUPLICATED_WRITE} outside {@code idempotentBy}. Its kind is
 * {@link FailureKind#MISCONFIGURED}: the composition is wrong, and no retry can fix it.
 *
 * <p>Hedge a write only when the dependency deduplicates on the key sent with every attempt:
 *
 * <pre>{@code
 * payments.charge(order)                                                // sends Idempotency-Key with each attempt
 *     .transformDeferred(hedgedBy(policy))
 *     .transformDeferred(idempotentBy(key, store, Receipt.class))
 *     .transformDeferred(sideEffect(SideEffect.DEDUPLICATED_WRITE));
 * }</pre>
 */
public final class UnsafeHedgeException extends Refusal {

  private static final long serialVersionUID = 1L;

  /** @param source the name of the hedge policy that refused */
  public UnsafeHedgeException(String source) {
    super("hedge", source, "the call is a write that must not be sent twice, so a backup attempt could repeat its"
        + " side effect while the first is processed (an idempotency claim does not stop that). Remove hedgedBy from"
        + " writes, or, if the dependency deduplicates on the idempotency key sent with every attempt, declare"
        + " sideEffect(DEDUPLICATED_WRITE) around idempotentBy(..).");
  }
}
