package io.breakwater.hedge;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;

/**
 * Signalled at subscription, before any call is made, when {@code hedgedBy} guards a call declared
 * {@link io.breakwater.idempotency.SideEffect#NON_IDEMPOTENT_WRITE} that does not run inside {@code idempotentBy}:
 * a backup attempt could charge a card or send an e-mail twice. Its kind is {@link FailureKind#MISCONFIGURED}: the
 * composition is wrong, and no retry can fix it.
 *
 * <pre>{@code
 * payments.charge(order)
 *     .transformDeferred(hedgedBy(policy))
 *     .transformDeferred(idempotentBy(key, store, Receipt.class))       // makes the second attempt safe
 *     .transformDeferred(sideEffect(SideEffect.NON_IDEMPOTENT_WRITE));
 * }</pre>
 */
public final class UnsafeHedgeException extends RuntimeException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final String source;

  /** @param source the name of the hedge policy that refused */
  public UnsafeHedgeException(String source) {
    super("Refusing to hedge '" + source + "': the call is declared NON_IDEMPOTENT_WRITE and holds no idempotency"
        + " key, so a backup attempt could repeat its side effect. Wrap it in idempotentBy(..) outside hedgedBy, or"
        + " declare sideEffect(IDEMPOTENT_WRITE) if the API deduplicates requests itself.");
    this.source = source;
  }

  @Override
  public String source() {
    return source;
  }

  /** {@link FailureKind#MISCONFIGURED}: the composition must change; retrying cannot help. */
  @Override
  public FailureKind failureKind() {
    return FailureKind.MISCONFIGURED;
  }

  /** No stack trace: raised by an admission check. */
  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
