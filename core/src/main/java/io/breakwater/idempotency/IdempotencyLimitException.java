package io.breakwater.idempotency;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.RuntimeFailure;

/**
 * A limit of the idempotency policy refused the call: the key's TTL is shorter than the deadline in force (a retry
 * after the key expired would repeat the side effect), or the result is over the size limit. The message says which
 * setting to change. Kind {@link FailureKind#MISCONFIGURED}.
 */
public final class IdempotencyLimitException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  public IdempotencyLimitException(String key, String message) {
    super(key, FailureKind.MISCONFIGURED, message, null);
  }
}
