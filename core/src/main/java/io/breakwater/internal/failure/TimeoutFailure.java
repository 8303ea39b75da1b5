package io.breakwater.internal.failure;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * {@link RuntimeFailure} for the exceptions that are {@link TimeoutException}s, so that the timeout handling Reactor
 * users already have catches them: the source, the kind, the message and cause, and no stack trace (a timer raised
 * it). Java has one superclass per class, so the two bases cannot be one.
 *
 * <p>Not API: users catch the public exceptions that extend it, {@link TimeoutException} or
 * {@link BreakwaterException}.
 */
public abstract class TimeoutFailure extends TimeoutException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final String source;
  private final FailureKind kind;

  /** The same parameters as {@link RuntimeFailure}'s. */
  protected TimeoutFailure(String source, FailureKind kind, String message, @Nullable Throwable cause) {
    super(message);
    this.source = source;
    this.kind = kind;
    if (cause != null) {
      initCause(cause);
    }
  }

  @Override
  public String source() {
    return source;
  }

  @Override
  public FailureKind failureKind() {
    return kind;
  }

  /** No stack trace: a timer raised it, and its stack says nothing about the cause. */
  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
