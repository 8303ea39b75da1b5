package io.breakwater.agent;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;

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
public final class ToolUnavailableException extends RuntimeException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final String tool;
  private final FailureKind cause;
  private final int failures;

  public ToolUnavailableException(String tool, FailureKind cause, int failures) {
    super("Tool '" + tool + "' is unavailable for the rest of this task: it failed " + failures + " times with "
        + cause.tag());
    this.tool = tool;
    this.cause = cause;
    this.failures = failures;
  }

  /** The tool's name. */
  @Override
  public String source() {
    return tool;
  }

  /** {@link FailureKind#CIRCUIT_OPEN}: not retryable in this task; fallbacks follow {@link #causeKind()}. */
  @Override
  public FailureKind failureKind() {
    return FailureKind.CIRCUIT_OPEN;
  }

  /** The kind of failure whose threshold was reached. */
  public FailureKind causeKind() {
    return cause;
  }

  /** How many failures of {@link #causeKind()} the tool had in this task. */
  public int failures() {
    return failures;
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
