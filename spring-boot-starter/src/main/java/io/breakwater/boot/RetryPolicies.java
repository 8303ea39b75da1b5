package io.breakwater.boot;

import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;

/**
 * The application's retry policies by dependency name: those configured under {@code breakwater.retry.policies} (or
 * defined as {@code RetryPolicy} beans, which win over configuration of the same name), and, for any other name, a
 * policy of that name with {@code breakwater.retry.defaults}, built on first use and kept.
 *
 * <pre>{@code
 * Mono<Offers> offers = flights.search(query)
 *     .transformDeferred(retryWithBudget(policies.policy("flights")));
 * }</pre>
 *
 * <p>Each policy draws on the retry budget of its own name (or the one its {@code budget} setting names), created
 * for this application context rather than shared by the whole JVM. Thread-safe.
 */
public final class RetryPolicies {

  private final ConcurrentMap<String, RetryPolicy> policies;
  private final Function<String, RetryPolicy> unconfigured;

  /**
   * Policies {@code configured} by name, and {@code unconfigured} to build the policy of any other name (it must
   * return a policy of that name).
   */
  public RetryPolicies(Map<String, RetryPolicy> configured, Function<String, RetryPolicy> unconfigured) {
    this.policies = new ConcurrentHashMap<>(configured);
    this.unconfigured = Objects.requireNonNull(unconfigured, "unconfigured");
  }

  /** The policy of {@code name}: configured, or built with the defaults on first use. */
  public RetryPolicy policy(String name) {
    Objects.requireNonNull(name, "name");
    return policies.computeIfAbsent(name, unconfigured);
  }

  /** The names of the policies configured or used so far. */
  public Set<String> names() {
    return Set.copyOf(policies.keySet());
  }

  /** The retry budgets of the policies configured or used so far, by policy name. */
  public Map<String, RetryBudget> budgets() {
    Map<String, RetryBudget> budgets = new TreeMap<>();
    policies.forEach((name, policy) -> budgets.put(name, policy.budget(policy.scheduler().get())));
    return budgets;
  }
}
