package io.breakwater.internal.failure;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;
import org.jspecify.annotations.Nullable;

/**
 * What Breakwater's own unchecked exceptions share: the name of what rejected or ended the call, its failure kind, the
 * message and cause, and no stack trace (they are raised by timers and admission checks, whose stack says nothing
 * about the cause; the message names what rejected the call). {@link TimeoutFailure} is the same for the exceptions
 * that must also be {@link java.util.concurrent.TimeoutException}s.
 *
 * <p>Not API: users catch the public exceptions that extend it, or {@link BreakwaterException}.
 */
public abstract class RuntimeFailure extends RuntimeException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final String source;
  private final FailureKind kind;

  /**
   * @param source the name of what rejected or ended the call
   * @param kind what kind of failure this is
   * @param message the whole message
   * @param cause the failure behind it, or {@code null} (then one may still be set with {@link #initCause})
   */
  protected RuntimeFailure(String source, FailureKind kind, @Nullable String message, @Nullable Throwable cause) {
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

  /** No stack trace: the message and the cause say what happened. */
  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
