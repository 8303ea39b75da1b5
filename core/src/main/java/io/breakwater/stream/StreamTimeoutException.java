package io.breakwater.stream;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

/**
 * A stream timed out on its progress clock: the common type of {@link FirstItemTimeoutException} and
 * {@link IdleTimeoutException}. A {@link TimeoutException} and a retryable {@link FailureKind#TIMEOUT}; carries the
 * configured timeout and the time the stream had gone without progress. No stack trace: it is raised by a timer.
 *
 * <pre>{@code
 * stream.onErrorResume(StreamTimeoutException.class, e -> Flux.just("timed out after " + e.elapsed()));
 * }</pre>
 */
public abstract sealed class StreamTimeoutException extends TimeoutException implements BreakwaterException
    permits FirstItemTimeoutException, IdleTimeoutException {

  private static final long serialVersionUID = 1L;

  private final String source;
  private final Duration timeout;
  private final Duration elapsed;

  StreamTimeoutException(String message, String source, Duration timeout, Duration elapsed) {
    super(message);
    this.source = source;
    this.timeout = timeout;
    this.elapsed = elapsed;
  }

  /** The configured timeout that expired. */
  public Duration timeout() {
    return timeout;
  }

  /** How long the stream had gone without (first) progress when the timeout was detected. */
  public Duration elapsed() {
    return elapsed;
  }

  /** {@code "firstItemTimeout"} or {@code "idleTimeout"}. */
  @Override
  public String source() {
    return source;
  }

  /** {@link FailureKind#TIMEOUT}: retryable if the task has time left. */
  @Override
  public FailureKind failureKind() {
    return FailureKind.TIMEOUT;
  }

  /** No stack trace: it is raised by a timer, whose stack says nothing about the cause. */
  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
