package io.breakwater.idempotency;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.RuntimeFailure;
import org.jspecify.annotations.Nullable;

/**
 * The first call under this key failed with a non-retryable failure that the policy keeps
 * ({@link IdempotencyPolicy.Builder#cacheNonRetryableFailures(boolean)}); this duplicate gets the same failure,
 * by kind and message, without running anything.
 */
public final class CachedFailureException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  /**
   * @param key the idempotency key as messages name it
   * @param kind the kind of the original failure
   * @param message the original failure's message
   */
  public CachedFailureException(String key, FailureKind kind, @Nullable String message) {
    super(key, kind, message, null);
  }
}
