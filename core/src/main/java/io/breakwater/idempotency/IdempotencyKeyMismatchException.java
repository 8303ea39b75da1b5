package io.breakwater.idempotency;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;

/**
 * The key was used before with a different payload: the same order id with another amount, say. Nothing runs. Kind
 * {@link FailureKind#INVALID_ARGUMENT}: the caller must use a new key for a new request.
 */
public final class IdempotencyKeyMismatchException extends RuntimeException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final String key;

  public IdempotencyKeyMismatchException(String key, String fingerprint, String storedFingerprint) {
    super("Idempotency key '" + key + "' was used with another payload (fingerprint " + abbreviate(storedFingerprint)
        + ", this call " + abbreviate(fingerprint) + "): nothing was run. Use a new key for a different request");
    this.key = key;
  }

  private static String abbreviate(String fingerprint) {
    return fingerprint.length() > 12 ? fingerprint.substring(0, 12) + "…" : fingerprint;
  }

  @Override
  public String source() {
    return key;
  }

  @Override
  public FailureKind failureKind() {
    return FailureKind.INVALID_ARGUMENT;
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
