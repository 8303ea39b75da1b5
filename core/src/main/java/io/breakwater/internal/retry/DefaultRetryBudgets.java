package io.breakwater.internal.retry;

import io.breakwater.retry.RetryBudget;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The budgets of policies that were not given one: one {@link RetryBudget#ratio(double, double) ratio(0.1, 10)}
 * bucket per dependency name in this JVM, so that every policy named "flights" shares the same budget.
 */
public final class DefaultRetryBudgets {

  public static final double DEFAULT_RATIO = 0.1;
  public static final double DEFAULT_MIN_RETRIES_PER_SECOND = 10.0;

  private static final ConcurrentMap<String, RetryBudget> BUDGETS = new ConcurrentHashMap<>();

  private DefaultRetryBudgets() {}

  public static RetryBudget forName(String name) {
    return BUDGETS.computeIfAbsent(name, n -> RetryBudget.ratio(DEFAULT_RATIO, DEFAULT_MIN_RETRIES_PER_SECOND));
  }
}
