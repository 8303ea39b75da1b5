package io.breakwater.retry;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.Refusal;

/**
 * Signalled at subscription, before any call is made, when {@code retryWithBudget} guards a call declared
 * {@link io.breakwater.idempotency.SideEffect#NON_IDEMPOTENT_WRITE} that does not run inside {@code idempotentBy}:
 * retrying it could charge a card or send an e-mail twice. Its kind is {@link FailureKind#MISCONFIGURED}: the
 * composition is wrong, and no retry can fix it.
 *
 * <pre>{@code
 * payments.charge(order)
 *     .transformDeferred(retryWithBudget(policy))
 *     .transformDeferred(idempotentBy(key, store, Receipt.class))       // makes the retry safe
 *     .transformDeferred(sideEffect(SideEffect.NON_IDEMPOTENT_WRITE));
 * }</pre>
 */
public final class UnsafeRetryException extends Refusal {

  private static final long serialVersionUID = 1L;

  /** @param source the name of the retry policy that refused */
  public UnsafeRetryException(String source) {
    super("retry", source, "the call is declared NON_IDEMPOTENT_WRITE and holds no idempotency key, so a retry could"
        + " repeat its side effect. Wrap it in idempotentBy(..) outside retryWithBudget, or declare"
        + " sideEffect(IDEMPOTENT_WRITE) if the API deduplicates requests itself.");
  }
}
