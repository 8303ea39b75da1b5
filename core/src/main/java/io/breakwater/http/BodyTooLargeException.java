package io.breakwater.http;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.RuntimeFailure;

/**
 * A response body longer than the limit it was read with. Reading stopped at the limit and the connection was
 * closed, so the rest was never buffered. Not retryable ({@link FailureKind#MISCONFIGURED}): the same request would
 * get the same answer; raise the limit if such answers are expected.
 */
public final class BodyTooLargeException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  private final int maxBytes;

  public BodyTooLargeException(int maxBytes) {
    super("http", FailureKind.MISCONFIGURED, "Response body is longer than " + maxBytes + " bytes: reading stopped"
        + " there and the connection was closed; raise maxBodyBytes if such answers are expected", null);
    this.maxBytes = maxBytes;
  }

  /** The limit the body was read with, in bytes. */
  public int maxBytes() {
    return maxBytes;
  }
}
