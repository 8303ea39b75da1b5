package io.breakwater.stream;

import io.breakwater.failure.FailureKind;
import java.time.Duration;

/**
 * Signalled by {@link io.breakwater.Breakwater#idleTimeout(Duration)} when a stream made no progress for its idle
 * timeout: no progress item (heartbeats do not count) since the last one, or since subscription. Upstream has been
 * cancelled. A retryable {@link FailureKind#TIMEOUT}, and a {@link java.util.concurrent.TimeoutException}.
 *
 * <pre>{@code
 * tokens.transformDeferred(idleTimeout(Duration.ofSeconds(3)))
 *     .onErrorResume(IdleTimeoutException.class, e -> Flux.just("[stalled " + e.sinceProgress() + "]"));
 * }</pre>
 */
public final class IdleTimeoutException extends StreamTimeoutException {

  private static final long serialVersionUID = 1L;

  /**
   * @param idleTimeout the configured idle timeout
   * @param sinceProgress how long the stream had gone without progress when the stall was detected
   */
  public IdleTimeoutException(Duration idleTimeout, Duration sinceProgress) {
    super("idleTimeout", idleTimeout, sinceProgress, "made no progress for", "idle timeout");
  }

  /** The configured idle timeout. */
  public Duration idleTimeout() {
    return timeout();
  }

  /** How long the stream had gone without progress when the stall was detected (at least the idle timeout). */
  public Duration sinceProgress() {
    return elapsed();
  }
}
