package io.breakwater.boot;

import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
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
 *
 * <p>Names must come from a closed set (dependency names, never user data): each one keeps a policy, a budget and
 * their meters for the life of the context, so at most {@value #DEFAULT_MAX_POLICIES} policies are built from the
 * defaults (configured ones do not count); a new name past that bound is refused with an
 * {@code IllegalStateException}, as {@code CircuitBreakerRegistry} refuses a breaker past its own.
 */
public final class RetryPolicies {

  /** How many policies built from the defaults a {@code RetryPolicies} keeps at most. */
  public static final int DEFAULT_MAX_POLICIES = 1_000;

  private final ConcurrentMap<String, RetryPolicy> policies;
  private final Function<String, RetryPolicy> unconfigured;
  private final int maxPolicies;
  private final AtomicInteger built = new AtomicInteger();

  /**
   * Policies {@code configured} by name, and {@code unconfigured} to build the policy of any other name (it must
   * return a policy of that name).
   */
  public RetryPolicies(Map<String, RetryPolicy> configured, Function<String, RetryPolicy> unconfigured) {
    this(configured, unconfigured, DEFAULT_MAX_POLICIES);
  }

  /** As {@link #RetryPolicies(Map, Function)}, building at most {@code maxPolicies} policies from the defaults. */
  public RetryPolicies(Map<String, RetryPolicy> configured, Function<String, RetryPolicy> unconfigured,
      int maxPolicies) {
    if (maxPolicies < 1) {
      throw new IllegalArgumentException("maxPolicies is " + maxPolicies + ": give 1 or more, e.g. "
          + DEFAULT_MAX_POLICIES);
    }
    this.policies = new ConcurrentHashMap<>(configured);
    this.unconfigured = Objects.requireNonNull(unconfigured, "unconfigured");
    this.maxPolicies = maxPolicies;
  }

  /**
   * The policy of {@code name}: configured, or built with the defaults on first use.
   *
   * @throws IllegalStateException if it is new and {@code maxPolicies} policies were already built from the defaults
   */
  public RetryPolicy policy(String name) {
    Objects.requireNonNull(name, "name");
    RetryPolicy known = policies.get(name);
    return known != null ? known : policies.computeIfAbsent(name, this::build);
  }

  private RetryPolicy build(String name) {
    if (built.incrementAndGet() > maxPolicies) {
      built.decrementAndGet();
      throw new IllegalStateException("RetryPolicies already built " + maxPolicies + " policies from the defaults, "
          + "its bound, and was asked for a new one: policy names must come from a closed set (dependency names, "
          + "never user data); configure the names under breakwater.retry.policies if there really are more");
    }
    try {
      return unconfigured.apply(name);
    } catch (RuntimeException e) {
      built.decrementAndGet();
      throw e;
    }
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
