package io.breakwater.agent;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.Durations;
import io.breakwater.internal.failure.RuntimeFailure;
import java.time.Duration;

/**
 * Signalled at once, without calling the tool, when the tool answered "rate limited" earlier in this task and the
 * wait it asked for (its {@code Retry-After} in seconds, else the retry policy's {@code rateLimitedBase}) has not
 * passed. A {@link FailureKind#RATE_LIMITED}: fallbacks apply; the model is told how long to wait.
 *
 * <pre>{@code
 * crm.call(query).onErrorResume(ToolRateLimitedException.class, e -> Mono.just("try again in " + e.waitFor()));
 * }</pre>
 */
public final class ToolRateLimitedException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  private final Duration wait;

  public ToolRateLimitedException(String tool, Duration wait) {
    super(tool, FailureKind.RATE_LIMITED, "Tool '" + tool + "' is rate-limited: wait " + Durations.format(wait)
        + " before calling it again", null);
    this.wait = wait;
  }

  /** How long until the tool may be called again. */
  public Duration waitFor() {
    return wait;
  }
}
