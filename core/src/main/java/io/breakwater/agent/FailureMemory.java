package io.breakwater.agent;

import io.breakwater.internal.agent.TaskState;
import java.util.List;
import reactor.util.context.ContextView;

/**
 * The compressed failure memory of a task: one line per tool that failed in it, updated in place on each of its
 * calls rather than appended, so the model's prompt does not grow with every retry. Read it with
 * {@link #from(ContextView)} and put {@link #render()} in the prompt:
 *
 * <pre>{@code
 * Mono.deferContextual(ctx -> llm.prompt(history + "\n" + FailureMemory.from(ctx).render()));
 * }</pre>
 *
 * A line reads {@code flights.search: 3 failures (timeout 2, rate_limited 1); last: timeout (no answer within
 * 1.2s); unavailable for this task}. Tool names are sorted; reasons are redacted.
 *
 * @param lines one line per tool, sorted by tool name; empty outside a task or before any failure
 */
public record FailureMemory(List<String> lines) {

  public FailureMemory {
    lines = List.copyOf(lines);
  }

  /** The memory of the task in {@code context}; empty outside a task. */
  public static FailureMemory from(ContextView context) {
    TaskState state = TaskState.from(context);
    return new FailureMemory(state == null ? List.of() : state.memoryLines());
  }

  /** The lines joined by new lines, under a {@code tool failures so far:} header; empty when there are none. */
  public String render() {
    return lines.isEmpty() ? "" : "tool failures so far:\n" + String.join("\n", lines);
  }
}
