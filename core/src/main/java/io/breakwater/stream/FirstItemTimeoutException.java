package io.breakwater.stream;

import io.breakwater.failure.FailureKind;
import java.time.Duration;

/**
 * Signalled by {@link io.breakwater.Breakwater#firstItemTimeout(Duration)} when a stream gave no progress item
 * (heartbeats do not count) within its first-item timeout after subscription: for an LLM, no first token. Upstream
 * has been cancelled. A retryable {@link FailureKind#TIMEOUT}, and a {@link java.util.concurrent.TimeoutException}; nothing was
 * delivered yet, so a retry is safe.
 *
 * <pre>{@code
 * tokens.transformDeferred(firstItemTimeout(Duration.ofSeconds(10)))
 *     .retryWhen(Retry.max(1).filter(FirstItemTimeoutException.class::isInstance));
 * }</pre>
 */
public final class FirstItemTimeoutException extends StreamTimeoutException {

  private static final long serialVersionUID = 1L;

  /**
   * @param firstItemTimeout the configured first-item timeout
   * @param waited how long the stream had been waited for when the timeout was detected
   */
  public FirstItemTimeoutException(Duration firstItemTimeout, Duration waited) {
    super("firstItemTimeout", firstItemTimeout, waited, "gave no first item in", "first-item timeout");
  }

  /** The configured first-item timeout. */
  public Duration firstItemTimeout() {
    return timeout();
  }

  /** How long the first item had been waited for when the timeout was detected. */
  public Duration waited() {
    return elapsed();
  }
}
