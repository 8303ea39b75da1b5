package io.breakwater.agent;

import io.breakwater.failure.FailureKind;
import java.util.List;

/**
 * A failed tool call described for the model: short, structured, redacted, with what to do next and what not to
 * do. {@link #render()} gives, for example:
 *
 * <pre>
 * tool_failure: flights.search
 * kind: timeout
 * reason: no answer within 1.2s (3 attempts)
 * next: call flights.backup instead; or continue without this result
 * avoid: calling flights.search again with the same arguments right away
 * budget left: 4.2s, 1 retry, 7 steps, 12000 tokens
 * </pre>
 *
 * Get one from {@link ToolOutcome.Failure#feedback()}. Immutable.
 *
 * @param tool the tool's name
 * @param kind the kind of failure
 * @param reason why, in a few words; secrets masked
 * @param next suggested next actions, most useful first
 * @param avoid actions not to take
 * @param remaining the task's budget when the call failed
 */
public record ToolFailure(String tool, FailureKind kind, String reason, List<String> next, List<String> avoid,
    RemainingBudget remaining) {

  public ToolFailure {
    next = List.copyOf(next);
    avoid = List.copyOf(avoid);
  }

  /** Six short lines; see the class comment. */
  public String render() {
    return "tool_failure: " + tool + "\nkind: " + kind.tag() + "\nreason: " + reason
        + "\nnext: " + (next.isEmpty() ? "-" : String.join("; or ", next))
        + "\navoid: " + (avoid.isEmpty() ? "-" : String.join("; ", avoid))
        + "\n" + remaining.render();
  }

  @Override
  public String toString() {
    return render();
  }
}
