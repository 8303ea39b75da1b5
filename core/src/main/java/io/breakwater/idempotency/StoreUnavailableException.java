package io.breakwater.idempotency;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.RuntimeFailure;

/**
 * The idempotency store could not be asked (down, unreachable, too slow for the deadline), so the call was not made:
 * without a claim, a side effect could happen twice. Writes fail closed; a {@link SideEffect#READ_ONLY} call runs
 * anyway when the policy says reads fail open ({@link IdempotencyPolicy.Builder#failOpenForReads(boolean)}). Kind
 * {@link FailureKind#CONNECTION}: retryable once the store is back.
 */
public final class StoreUnavailableException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  public StoreUnavailableException(String key, Throwable cause) {
    super(key, FailureKind.CONNECTION, "The idempotency store is unavailable, so the call with key '" + key
        + "' was not made (failing closed): " + cause, cause);
  }
}
