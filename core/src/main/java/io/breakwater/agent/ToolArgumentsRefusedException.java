package io.breakwater.agent;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.RuntimeFailure;

/**
 * Signalled at once, without calling the tool, when the tool refused these very arguments earlier in this task as
 * {@link FailureKind#INVALID_ARGUMENT} or {@link FailureKind#CLIENT_ERROR} often enough (see
 * {@link ToolDescriptor.Builder#unavailableAfter}): sending them again would get the same answer. Its kind is the
 * refusal's, so no fallback answers it and the model is told, with the original reason, to change the arguments.
 * Other arguments still reach the tool: a caller's mistake never writes a tool off.
 *
 * <pre>{@code
 * catalog.call(new Lookup("abc"))
 *     .onErrorResume(ToolArgumentsRefusedException.class, e -> Mono.just("fix: " + e.reason()));
 * }</pre>
 */
public final class ToolArgumentsRefusedException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  private final String reason;
  private final int failures;

  /**
   * @param tool the tool's name
   * @param kind {@link FailureKind#INVALID_ARGUMENT} or {@link FailureKind#CLIENT_ERROR}
   * @param reason the earlier refusal's reason, already redacted
   * @param failures how many times the tool refused these arguments in this task
   */
  public ToolArgumentsRefusedException(String tool, FailureKind kind, String reason, int failures) {
    super(tool, kind, "Tool '" + tool + "' refused these arguments " + failures + (failures == 1 ? " time" : " times")
        + " in this task (" + kind.tag() + ": " + reason + "); they were not sent again: change them", null);
    this.reason = reason;
    this.failures = failures;
  }

  /** Why the tool refused these arguments, redacted. */
  public String reason() {
    return reason;
  }

  /** How many times the tool refused these arguments in this task. */
  public int failures() {
    return failures;
  }
}
