package io.breakwater.deadline;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.Durations;
import io.breakwater.internal.deadline.DeadlineOperator;
import java.time.Duration;

/**
 * Signalled when one call (one attempt) outlives its per-call budget, set by
 * {@link io.breakwater.Breakwater#perCallTimeout()}. Unlike {@link DeadlineExceededException}, the task still has
 * time left, so this is a {@link FailureKind#TIMEOUT}: retryable. Its {@link #source()} is the call's name; it is a
 * {@link java.util.concurrent.TimeoutException}.
 *
 * <pre>{@code
 * tool.call(args)
 *     .transformDeferred(perCallTimeout())   // min(remaining × 0.6, 12 s) per attempt
 *     .transformDeferred(retryWithBudget(fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))))
 *     .transformDeferred(withDeadline(Duration.ofSeconds(30)));
 * }</pre>
 */
public final class CallTimeoutException extends BudgetTimeout {

  private static final long serialVersionUID = 1L;

  public CallTimeoutException(String callName, Duration budget, Duration used) {
    super(callName, FailureKind.TIMEOUT, (DeadlineOperator.UNNAMED_CALL.equals(callName) ? "A call"
        : "Call '" + callName + "'") + " timed out after running " + Durations.format(used)
        + " (its per-call time limit: " + Durations.format(budget) + ")", budget, used);
  }
}
