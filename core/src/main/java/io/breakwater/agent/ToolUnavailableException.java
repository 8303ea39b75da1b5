package io.breakwater.agent;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.RuntimeFailure;

/**
 * Signalled at once, without calling the tool, when the tool has failed often enough in this task to be written off
 * for the rest of it (see {@link ToolDescriptor.Builder#unavailableAfter}). Its kind is
 * {@link FailureKind#CIRCUIT_OPEN}: a breaker scoped to one task. It is not retried. Fallbacks apply as they would to
 * the failures that wrote the tool off ({@link #causeKind()}); refusals of the caller's own arguments never write a
 * tool off (see {@link ToolArgumentsRefusedException}).
 *
 * <pre>{@code
 * flights.call(query)
 *     .onErrorResume(ToolUnavailableException.class, e -> otherFlights.call(query));
 * }</pre>
 */
public final class ToolUnavailableException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  private final FailureKind cause;
  private final int failures;

  public ToolUnavailableException(String tool, FailureKind cause, int failures) {
    super(tool, FailureKind.CIRCUIT_OPEN, "Tool '" + tool + "' is unavailable for the rest of this task: it failed "
        + failures + " times with " + cause.tag(), null);
    this.cause = cause;
    this.failures = failures;
  }

  /** The kind of failure whose threshold was reached. */
  public FailureKind causeKind() {
    return cause;
  }

  /** How many failures of {@link #causeKind()} the tool had in this task. */
  public int failures() {
    return failures;
  }
}
