package io.breakwater.stream;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.Durations;
import io.breakwater.internal.failure.TimeoutFailure;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

/**
 * A stream timed out on its progress clock: the common type of {@link FirstItemTimeoutException} and
 * {@link IdleTimeoutException}. A {@link TimeoutException} and a retryable {@link FailureKind#TIMEOUT}; carries the
 * configured timeout and the time the stream had gone without progress. Its {@link #source()} is
 * {@code "firstItemTimeout"} or {@code "idleTimeout"}. No stack trace: it is raised by a timer.
 *
 * <pre>{@code
 * stream.onErrorResume(StreamTimeoutException.class, e -> Flux.just("timed out after " + e.elapsed()));
 * }</pre>
 */
public abstract sealed class StreamTimeoutException extends TimeoutFailure
    permits FirstItemTimeoutException, IdleTimeoutException {

  private static final long serialVersionUID = 1L;

  private final Duration timeout;
  private final Duration elapsed;

  /** The message reads {@code Stream <what> <elapsed> (<clock> <timeout>)}. */
  StreamTimeoutException(String source, Duration timeout, Duration elapsed, String what, String clock) {
    super(source, FailureKind.TIMEOUT, "Stream " + what + " " + Durations.format(elapsed) + " (" + clock + " "
        + Durations.format(timeout) + ")", null);
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
}
