package io.breakwater.internal.agent;

import io.breakwater.agent.RemainingBudget;
import io.breakwater.internal.Saturating;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The meters of one tool: {@code breakwater.tool.calls} (timer; tool, family, result),
 * {@code breakwater.tool.timeouts} (counter; tool, type) and {@code breakwater.task.budget.remaining} (summary;
 * kind). Meters are cached per tag value, so a call looks one up in a map.
 */
public final class ToolMetrics {

  public static final String CALLS = "breakwater.tool.calls";
  public static final String TIMEOUTS = "breakwater.tool.timeouts";
  public static final String BUDGET_REMAINING = "breakwater.task.budget.remaining";

  private final MeterRegistry registry;
  private final String tool;
  private final String family;
  private final ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> timeouts = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, DistributionSummary> budgets = new ConcurrentHashMap<>();

  public ToolMetrics(MeterRegistry registry, String tool, @Nullable String family) {
    this.registry = registry;
    this.tool = tool;
    this.family = family == null ? "none" : family;
  }

  /** Records a finished call; {@code result} is success, fallback, cancelled or a failure kind's tag. */
  public void call(String result, long nanos) {
    timers.computeIfAbsent(result, r -> Timer.builder(CALLS).tag("tool", tool).tag("family", family)
        .tag("result", r).description("Tool calls, by how they ended").register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /** Counts a timeout of {@code type}: hard, per_call, idle or first_item. */
  public void timeout(String type) {
    timeouts.computeIfAbsent(type, t -> Counter.builder(TIMEOUTS).tag("tool", tool).tag("type", t)
        .description("Tool call timeouts, by which timeout fired").register(registry)).increment();
  }

  /** Records the task's remaining budget when a call starts, for each limited kind. */
  public void budget(RemainingBudget remaining) {
    if (remaining.time() != null) {
      summary("time_seconds").record(Saturating.nanos(remaining.time()) / 1e9);
    }
    if (remaining.retries() >= 0) {
      summary("retries").record(remaining.retries());
    }
    if (remaining.steps() >= 0) {
      summary("steps").record(remaining.steps());
    }
    if (remaining.tokens() >= 0) {
      summary("tokens").record(remaining.tokens());
    }
  }

  private DistributionSummary summary(String kind) {
    return budgets.computeIfAbsent(kind, k -> DistributionSummary.builder(BUDGET_REMAINING).tag("kind", k)
        .description("What tasks had left of each budget when a tool call started").register(registry));
  }
}
