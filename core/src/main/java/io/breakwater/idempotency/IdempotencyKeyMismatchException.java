package io.breakwater.idempotency;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.RuntimeFailure;

/**
 * The key was used before with a different payload: the same order id with another amount, say. Nothing runs. Kind
 * {@link FailureKind#INVALID_ARGUMENT}: the caller must use a new key for a new request.
 */
public final class IdempotencyKeyMismatchException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  /**
   * @param key the key's tag ({@link IdempotencyPolicy#tag}). The message quotes no fingerprint: the stored one is
   *     another caller's, computed over its whole payload.
   */
  public IdempotencyKeyMismatchException(String key) {
    super(key, FailureKind.INVALID_ARGUMENT, "Idempotency key '" + key + "' was used with another payload: nothing"
        + " was run. Use a new key for a different request, or leave transient fields out of the payload"
        + " (excluding(..))", null);
  }
}
