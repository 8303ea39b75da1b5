package io.breakwater.http;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;

/**
 * A response body longer than the limit it was read with. Reading stopped at the limit and the connection was
 * closed, so the rest was never buffered. Not retryable ({@link FailureKind#MISCONFIGURED}): the same request would
 * get the same answer; raise the limit if such answers are expected.
 */
public final class BodyTooLargeException extends RuntimeException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final int maxBytes;

  public BodyTooLargeException(int maxBytes) {
    super("Response body is longer than " + maxBytes + " bytes: reading stopped there and the connection was"
        + " closed; raise maxBodyBytes if such answers are expected");
    this.maxBytes = maxBytes;
  }

  /** The limit the body was read with, in bytes. */
  public int maxBytes() {
    return maxBytes;
  }

  @Override
  public String source() {
    return "http";
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
