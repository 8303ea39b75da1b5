package io.breakwater.internal.boot;

import static io.breakwater.internal.boot.FromProperties.path;

import io.breakwater.boot.BreakwaterProperties;
import io.breakwater.boot.BreakwaterProperties.RetrySettings;
import io.breakwater.breaker.CircuitBreakerRegistry;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Every name written under {@code breakwater.*} holds against the names that exist, before anything is built from
 * them. A reference (a tool's {@code retry}, {@code concurrency-limit} and {@code rate-limit}, a policy's
 * {@code budget}, the Spring AI advisor's {@code retry} and {@code rate-limit}) must name something configured. A
 * key (a breaker instance or family, a policy, a budget, a limit) that nothing in the configuration uses is kept for
 * code ({@code registry.breaker(name)}, {@code policies.policy(name)}, {@code limits.rate(name)}), unless it is a
 * close misspelling (at most two edits) of a name in use, which fails the start-up: {@code "[wether.forecast]"} next
 * to the tool {@code weather.forecast} configures nothing.
 */
final class ConfiguredNames {

  private ConfiguredNames() {}

  /**
   * Checks {@code p}'s names.
   *
   * @param tools every tool: configured and {@code ToolDescriptor} beans
   * @param families the family of every tool that has one
   * @param policies the retry policies configured or defined as beans
   * @param concurrencyLimits the concurrency limits configured or defined as beans
   * @param rateLimits the rate limits configured or defined as beans
   * @throws InvalidPropertiesException naming the first property whose name does not hold
   */
  static void check(BreakwaterProperties p, Set<String> tools, Set<String> families, Set<String> policies,
      Set<String> concurrencyLimits, Set<String> rateLimits) {
    Set<String> policiesUsed = new HashSet<>();
    Set<String> concurrencyUsed = new HashSet<>();
    Set<String> rateUsed = new HashSet<>();
    p.tools().forEach((name, tool) -> {
      String property = path("breakwater.tools", name);
      String retry = tool.retry();
      if (retry != null && !retry.equals(name)) {
        reference(property + ".retry", retry, "retry policy", policies, "add breakwater.retry.policies."
            + bracketed(retry) + ", or leave retry out (the tool then uses the policy of its own name, '" + name
            + "', with breakwater.retry.defaults)");
      }
      policiesUsed.add(retry == null ? name : retry);
      String concurrency = tool.concurrencyLimit();
      if (concurrency != null) {
        reference(property + ".concurrency-limit", concurrency, "concurrency limit", concurrencyLimits,
            "add breakwater.limits.concurrency." + bracketed(concurrency) + ".limit (e.g. 10)");
        concurrencyUsed.add(concurrency);
      }
      String rate = tool.rateLimit();
      if (rate != null) {
        reference(property + ".rate-limit", rate, "rate limit", rateLimits,
            "add breakwater.limits.rate." + bracketed(rate) + ".requests (e.g. 60)");
        rateUsed.add(rate);
      }
    });
    BreakwaterProperties.SpringAi springAi = p.springAi();
    if (springAi.retry() != null) {
      reference("breakwater.spring-ai.retry", springAi.retry(), "retry policy", policies,
          "add breakwater.retry.policies." + bracketed(springAi.retry()) + ", or leave retry out (the advisor then "
              + "retries twice with full jitter)");
      policiesUsed.add(springAi.retry());
    }
    if (springAi.rateLimit() != null) {
      reference("breakwater.spring-ai.rate-limit", springAi.rateLimit(), "rate limit", rateLimits,
          "add breakwater.limits.rate." + bracketed(springAi.rateLimit()) + ".requests (e.g. 500)");
      rateUsed.add(springAi.rateLimit());
    }
    BreakwaterProperties.Retry retry = p.retry();
    Set<String> budgets = new HashSet<>(retry.budgets().keySet());
    budgets.addAll(retry.policies().keySet());
    Set<String> budgetsUsed = new HashSet<>(policiesUsed);
    budgetReference("breakwater.retry.defaults.budget", retry.defaults(), budgets, budgetsUsed);
    retry.policies().forEach((name, settings) -> {
      budgetReference(path("breakwater.retry.policies", name) + ".budget", settings, budgets, budgetsUsed);
      budgetsUsed.add(FromProperties.budgetName(name, settings, retry.defaults()));
    });
    String toolsUse = "configures nothing: no configured tool is named so.";
    unused("breakwater.breakers.instances", p.breakers().instances(), tools, toolsUse, "tools");
    unused("breakwater.breakers.families", p.breakers().families(), families,
        "configures nothing: no configured tool is of that family.", "families");
    Set<String> policyNames = new HashSet<>(policiesUsed);
    policyNames.addAll(tools);
    unused("breakwater.retry.policies", retry.policies(), policyNames,
        "is a policy no tool uses (a tool uses the policy its retry names, else the one of its own name).",
        "policies in use");
    unused("breakwater.retry.budgets", retry.budgets(), budgetsUsed,
        "is a budget no policy draws on (a policy draws on the budget its budget names, else the one of its own "
            + "name).", "budgets in use");
    unused("breakwater.limits.concurrency", p.limits().concurrency(), concurrencyUsed,
        "is a limit no tool uses.", "concurrency limits in use");
    unused("breakwater.limits.rate", p.limits().rate(), rateUsed, "is a limit no tool uses.", "rate limits in use");
  }

  /** The family of a configured tool: its {@code family}, else the registry's default; {@code null} for none. */
  static @Nullable String family(String tool, @Nullable String family) {
    if (family != null) {
      return family.isEmpty() ? null : family;
    }
    return CircuitBreakerRegistry.prefixFamily(tool);
  }

  private static void budgetReference(String property, RetrySettings settings, Set<String> budgets,
      Set<String> used) {
    String budget = settings.budget();
    if (budget != null) {
      reference(property, budget, "retry budget", budgets, "add breakwater.retry.budgets." + bracketed(budget)
          + ".ratio (e.g. 0.15), or leave budget out (the policy then draws on the budget of its own name)");
      used.add(budget);
    }
  }

  private static void reference(String property, String value, String kind, Set<String> existing, String add) {
    if (!existing.contains(value)) {
      throw new InvalidPropertiesException(property, "is '" + value + "', which is no configured " + kind + "."
          + Names.didYouMean(value, existing) + " Configured: " + Names.list(existing) + ". Name one of them, or "
          + add + ".", null);
    }
  }

  /** Fails on the first key of {@code configured} outside {@code used} that is a close match of one in it. */
  private static void unused(String prefix, Map<String, ?> configured, Collection<String> used, String what,
      String usedNames) {
    for (String key : configured.keySet()) {
      String match = used.contains(key) ? null : Names.closeMatch(key, used);
      if (match != null) {
        throw new InvalidPropertiesException(path(prefix, key), "'" + key + "' " + what + " Did you mean '" + match
            + "'? The " + usedNames + ": " + Names.list(used) + ". Rename it to " + path(prefix, match) + ".", null);
      }
    }
  }

  private static String bracketed(String name) {
    return name.indexOf('.') >= 0 ? "[" + name + "]" : name;
  }
}
