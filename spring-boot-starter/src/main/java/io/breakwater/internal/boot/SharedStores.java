package io.breakwater.internal.boot;

import io.breakwater.boot.BreakwaterProperties.BudgetSettings;
import io.breakwater.breaker.BreakerStateStore;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import io.breakwater.retry.RetryBudget;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The stores that instances share, when the application has one (Redis): a bean of the Redis auto-configuration,
 * absent without it. Keeps the main auto-configuration free of Redis classes.
 */
public interface SharedStores {

  /** Where breakers share their transitions and probe claims. */
  BreakerStateStore breakerStateStore();

  /** A retry budget of {@code name} shared by every instance. */
  RetryBudget retryBudget(String name, BudgetSettings settings);

  /** A concurrency limit shared by every instance, with {@code template}'s name and settings. */
  ConcurrencyLimit concurrencyLimit(ConcurrencyLimit template, @Nullable Duration lease);

  /** A rate limit shared by every instance, with {@code template}'s name and settings. */
  RateLimit rateLimit(RateLimit template);
}
