package io.breakwater.internal.agent;

import org.jspecify.annotations.Nullable;

/**
 * What an {@code Observation} of a failed tool call is given instead of the tool's own error: the error's class and
 * the redacted reason, with no cause and no stack trace, because tracing handlers record an error's message and the
 * tool's message may quote arguments or credentials.
 */
final class RedactedError extends RuntimeException {

  private static final long serialVersionUID = 1L;

  RedactedError(Throwable error, @Nullable String redactedReason) {
    super(error.getClass().getName() + (redactedReason == null ? "" : ": " + redactedReason));
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
