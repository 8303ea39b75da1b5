package io.breakwater.agent;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;
import org.jspecify.annotations.Nullable;

/**
 * What the agent layer's own failures share: the name of what refused the call (a tool, a task), a failure kind, and
 * no stack trace (they are raised by admission checks, where the stack says nothing about the cause).
 */
abstract class AgentRejection extends RuntimeException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final String source;
  private final FailureKind kind;

  AgentRejection(String source, FailureKind kind, String message, @Nullable Throwable cause) {
    super(message, cause);
    this.source = source;
    this.kind = kind;
  }

  /** The name of the tool or task that refused the call. */
  @Override
  public final String source() {
    return source;
  }

  @Override
  public final FailureKind failureKind() {
    return kind;
  }

  @Override
  public final synchronized Throwable fillInStackTrace() {
    return this;
  }
}
