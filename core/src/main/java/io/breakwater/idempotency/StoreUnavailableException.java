package io.breakwater.idempotency;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;

/**
 * The idempotency store could not be asked (down, unreachable, too slow for the deadline), so the call was not made:
 * without a claim, a side effect could happen twice. Writes fail closed; a {@link SideEffect#READ_ONLY} call runs
 * anyway when the policy says reads fail open ({@link IdempotencyPolicy.Builder#failOpenForReads(boolean)}). Kind
 * {@link FailureKind#CONNECTION}: retryable once the store is back.
 */
public final class StoreUnavailableException extends RuntimeException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final String key;

  public StoreUnavailableException(String key, Throwable cause) {
    super("The idempotency store is unavailable, so the call with key '" + key + "' was not made (failing closed): "
        + cause, cause);
    this.key = key;
  }

  @Override
  public String source() {
    return key;
  }

  @Override
  public FailureKind failureKind() {
    return FailureKind.CONNECTION;
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
