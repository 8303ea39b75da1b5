package io.breakwater.idempotency;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;
import org.jspecify.annotations.Nullable;

/**
 * The arguments of an {@link IdempotencyKey} cannot be fingerprinted: they have no JSON form (NaN, a cycle), are
 * nested too deep, or a quantised time field holds no time. The message says what to change. It is an
 * {@link IllegalArgumentException} of kind {@link FailureKind#INVALID_ARGUMENT}: nothing was called.
 */
public final class IdempotencyKeyException extends IllegalArgumentException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  public IdempotencyKeyException(String message) {
    super(message);
  }

  public IdempotencyKeyException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }

  @Override
  public String source() {
    return "idempotency key";
  }

  @Override
  public FailureKind failureKind() {
    return FailureKind.INVALID_ARGUMENT;
  }
}
