package io.breakwater.deadline;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;
import io.breakwater.internal.Durations;
import io.breakwater.internal.deadline.DeadlineOperator;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

/**
 * Signalled when one call (one attempt) outlives its per-call budget, set by
 * {@link io.breakwater.Breakwater#perCallTimeout()}. Unlike {@link DeadlineExceededException}, the task still has
 * time left, so this is a {@link FailureKind#TIMEOUT}: retryable.
 *
 * <pre>{@code
 * tool.call(args)
 *     .transformDeferred(perCallTimeout())   // min(remaining × 0.6, 12 s) per attempt
 *     .transformDeferred(retryWithBudget(fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))))
 *     .transformDeferred(withDeadline(Duration.ofSeconds(30)));
 * }</pre>
 */
public final class CallTimeoutException extends TimeoutException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final String callName;
  private final Duration budget;
  private final Duration used;

  public CallTimeoutException(String callName, Duration budget, Duration used) {
    super((DeadlineOperator.UNNAMED_CALL.equals(callName) ? "A call" : "Call '" + callName + "'")
        + " timed out after running " + Durations.format(used) + " (its per-call time limit: "
        + Durations.format(budget) + ")");
    this.callName = callName;
    this.budget = budget;
    this.used = used;
  }

  @Override
  public String source() {
    return callName;
  }

  /** {@link FailureKind#TIMEOUT}: the task has time left, so another attempt may succeed. */
  @Override
  public FailureKind failureKind() {
    return FailureKind.TIMEOUT;
  }

  /** The per-call budget the call was given. */
  public Duration budget() {
    return budget;
  }

  /** How long the call ran before it was stopped. */
  public Duration used() {
    return used;
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
