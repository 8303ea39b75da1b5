package io.breakwater.agent;

import io.breakwater.internal.Durations;
import java.time.Duration;
import java.util.StringJoiner;
import org.jspecify.annotations.Nullable;

/**
 * What a task has left, read with {@link TaskBudget#remaining(reactor.util.context.ContextView)}: a snapshot, taken
 * when it was read. Counts are {@link TaskBudget#UNLIMITED} (-1) when the task set no such budget; {@code time} is
 * {@code null} when no deadline is in force.
 *
 * <p>{@link #render()} gives one short line for the model, e.g. {@code budget left: 4.2s, 1 retry, 7 steps, 12000
 * tokens}.
 *
 * @param time the time left before the deadline, or {@code null}
 * @param retries the retries left, or -1
 * @param steps the tool calls left, or -1
 * @param tokens the tokens left, or -1
 */
public record RemainingBudget(@Nullable Duration time, int retries, int steps, long tokens) {

  /** Nothing is limited: outside any task. */
  public static final RemainingBudget UNBOUNDED = new RemainingBudget(null, -1, -1, -1);

  /** Whether any budget is used up: no time, no steps or no tokens left (no retries left still allows calls). */
  public boolean exhausted() {
    return (time != null && time.isZero()) || steps == 0 || tokens == 0;
  }

  /** One short line for the model; {@code budget left: unlimited} when nothing is limited. */
  public String render() {
    StringJoiner parts = new StringJoiner(", ", "budget left: ", "");
    parts.setEmptyValue("budget left: unlimited");
    if (time != null) {
      parts.add(Durations.format(time));
    }
    if (retries >= 0) {
      parts.add(retries + (retries == 1 ? " retry" : " retries"));
    }
    if (steps >= 0) {
      parts.add(steps + (steps == 1 ? " step" : " steps"));
    }
    if (tokens >= 0) {
      parts.add(tokens + " tokens");
    }
    return parts.toString();
  }

  @Override
  public String toString() {
    return render();
  }
}
