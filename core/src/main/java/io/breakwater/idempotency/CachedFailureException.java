package io.breakwater.idempotency;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;
import org.jspecify.annotations.Nullable;

/**
 * The first call under this key failed with a non-retryable failure that the policy keeps
 * ({@link IdempotencyPolicy.Builder#cacheNonRetryableFailures(boolean)}); this duplicate gets the same failure,
 * by kind and message, without running anything.
 */
public final class CachedFailureException extends RuntimeException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final String key;
  private final FailureKind kind;

  public CachedFailureException(String key, FailureKind kind, @Nullable String message) {
    super(message);
    this.key = key;
    this.kind = kind;
  }

  @Override
  public String source() {
    return key;
  }

  /** The kind of the original failure. */
  @Override
  public FailureKind failureKind() {
    return kind;
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
