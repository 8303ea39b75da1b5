package io.breakwater.idempotency;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;

/**
 * A limit of the idempotency policy refused the call: the key's TTL is shorter than the deadline in force (a retry
 * after the key expired would repeat the side effect), or the result is over the size limit. The message says which
 * setting to change. Kind {@link FailureKind#MISCONFIGURED}.
 */
public final class IdempotencyLimitException extends RuntimeException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final String key;

  public IdempotencyLimitException(String key, String message) {
    super(message);
    this.key = key;
  }

  @Override
  public String source() {
    return key;
  }

  @Override
  public FailureKind failureKind() {
    return FailureKind.MISCONFIGURED;
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
