package io.breakwater.internal.retry;

import io.breakwater.failure.FailureKind;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.retry.RetryStopReason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The retry meters of one dependency. Counters are looked up when a failure happens (never on the success path);
 * the budget gauge is registered when the policy is built, so that making an operator (often once per call) costs
 * nothing.
 */
public final class RetryMetrics {

  static final String RETRIES = "breakwater.retry.retries";
  static final String REJECTIONS = "breakwater.retry.rejections";
  static final String BUDGET_LEVEL = "breakwater.retry.budget.level";

  private static final Logger LOG = Loggers.getLogger(RetryMetrics.class);
  /** The budgets whose first refusal was logged; weak, so a budget that is dropped is forgotten. */
  private static final Set<RetryBudget> WARNED = Collections.newSetFromMap(new WeakHashMap<>());

  private final MeterRegistry registry;
  private final String dependency;

  RetryMetrics(RetryPolicy policy) {
    this.registry = policy.meterRegistry();
    this.dependency = policy.name();
  }

  /** The budgets whose gauge is registered, with the registry: so that building a policy per call registers once. */
  private static final Map<RetryBudget, MeterRegistry> REGISTERED = new WeakHashMap<>();

  /**
   * Registers the gauge of a budget given to a policy, once per budget and registry (a policy built per call with a
   * shared budget looks up only this map).
   */
  public static void registerGivenBudget(String dependency, RetryBudget budget, MeterRegistry registry) {
    synchronized (REGISTERED) {
      if (REGISTERED.get(budget) == registry) {
        return;
      }
      REGISTERED.put(budget, registry);
    }
    registerBudgetGauge(dependency, budget, registry, true);
  }

  /**
   * Registers the gauge of the budget's level. When another budget already reports under this name to this
   * registry, the gauge follows this one; with {@code warn}, that is logged (two policies of one name, each with its
   * own budget, as the breaker gauges do). A budget already reported keeps the gauge as it is.
   */
  static void registerBudgetGauge(String dependency, RetryBudget budget, MeterRegistry registry, boolean warn) {
    Gauge earlier = registry.find(BUDGET_LEVEL).tag("dependency", dependency).gauge();
    if (earlier != null) {
      RetryBudget reported = reportedBy(earlier);
      if (reported == budget) {
        return;
      }
      registry.remove(earlier);
      if (reported != null && warn) {
        LOG.warn("Retry policy '{}': another budget of this name already reported {} to this MeterRegistry; the gauge "
            + "now follows this policy's budget ({}). Give policies of one name the same RetryBudget, or different "
            + "names", dependency, BUDGET_LEVEL, budget);
      }
    }
    Gauge.builder(BUDGET_LEVEL, budget, RetryMetrics::level)
        .tag("dependency", dependency)
        .description("Retry tokens the dependency's budget holds")
        .strongReference(true)
        .register(registry);
  }

  /** Removes the gauge of {@code budget}'s level, if it still reports that budget. */
  static void removeBudgetGauge(String dependency, RetryBudget budget, MeterRegistry registry) {
    Gauge gauge = registry.find(BUDGET_LEVEL).tag("dependency", dependency).gauge();
    if (gauge != null && reportedBy(gauge) == budget) {
      registry.remove(gauge);
    }
  }

  /** Set while {@link #reportedBy} reads a gauge: the budget the gauge's function was called with. */
  private static final ThreadLocal<RetryBudget[]> READING = new ThreadLocal<>();

  private static double level(RetryBudget budget) {
    RetryBudget[] reading = READING.get();
    if (reading != null) {
      reading[0] = budget;
    }
    return budget.level();
  }

  /**
   * The budget a gauge registered by {@link #registerBudgetGauge} reads, found by reading it once; {@code null} when
   * the registry does not call the function (a composite registry without registries, as the global one starts).
   */
  @Nullable
  private static RetryBudget reportedBy(Gauge gauge) {
    RetryBudget[] reading = new RetryBudget[1];
    READING.set(reading);
    try {
      gauge.value();
    } finally {
      READING.remove();
    }
    return reading[0];
  }

  void retried(FailureKind kind) {
    Counter.builder(RETRIES).tag("dependency", dependency).tag("reason", kind.tag())
        .description("Retries made, by the failure kind that caused them").register(registry).increment();
  }

  /**
   * The dependency's budget refused a retry: counted as a rejection ({@code reason=dependency_budget}), and the first
   * refusal of each budget is logged as a warning, with what it means and what to change.
   */
  void budgetRefused(RetryBudget budget) {
    boolean first;
    synchronized (WARNED) {
      first = WARNED.add(budget);
    }
    if (first) {
      LOG.warn("Retry budget of '{}' ({}) started refusing retries: retries would exceed its share of calls, so the "
          + "dependency fails more often than the budget tolerates (the default, 15 % of calls, keeps up with about "
          + "13 % failing calls). Refusals are counted by {}{{dependency={}, reason=dependency_budget}}; give the "
          + "policy a larger RetryBudget if this failure rate is expected. Logged once per budget.", dependency,
          budget, REJECTIONS, dependency);
    }
  }

  void rejected(RetryStopReason reason) {
    Counter.builder(REJECTIONS).tag("dependency", dependency).tag("reason", reason.tag())
        .description("Failures not retried, by why no retry was made").register(registry).increment();
  }
}
