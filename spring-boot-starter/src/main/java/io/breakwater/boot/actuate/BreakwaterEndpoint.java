package io.breakwater.boot.actuate;

import io.breakwater.boot.RetryPolicies;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The Actuator endpoint {@code breakwater}: every breaker with its state, failure rate, slow-call rate and calls, every
 * retry budget with its level, and every limit; and, for operators, a write operation that forces a breaker open or
 * closed.
 *
 * <pre>{@code
 * GET  /actuator/breakwater
 * POST /actuator/breakwater/breakers/flights.search   {"state": "open"}     (or "closed"; "families" for a family)
 * }</pre>
 *
 * <p>Its default access is read-only: the write operation answers only once
 * {@code management.endpoint.breakwater.access} is {@code unrestricted}, and, like every Actuator endpoint, it is
 * behind the application's Spring Security rules for Actuator when there are any. Expose it over HTTP with
 * {@code management.endpoints.web.exposure.include}.
 */
@Endpoint(id = "breakwater", defaultAccess = Access.READ_ONLY)
public class BreakwaterEndpoint {

  private final CircuitBreakerRegistry breakers;
  private final RetryPolicies policies;
  private final LimitsReport limits;

  public BreakwaterEndpoint(CircuitBreakerRegistry breakers, RetryPolicies policies, LimitsReport limits) {
    this.breakers = Objects.requireNonNull(breakers, "breakers");
    this.policies = Objects.requireNonNull(policies, "policies");
    this.limits = Objects.requireNonNull(limits, "limits");
  }

  /** Everything the endpoint lists. */
  @ReadOperation
  public Report report() {
    Map<String, BudgetReport> budgets = new TreeMap<>();
    policies.budgets().forEach((name, budget) -> budgets.put(name, new BudgetReport(budget.level())));
    return new Report(reports(breakers.toolBreakers()), reports(breakers.familyBreakers()), budgets,
        limits.limits());
  }

  /** One breaker: {@code kind} is {@code breakers} (a tool's) or {@code families}. */
  @ReadOperation
  public BreakerReport breaker(@Selector String kind, @Selector String name) {
    return BreakerReport.of(find(kind, name));
  }

  /**
   * Forces a breaker {@code open} (until forced closed) or {@code closed} (full traffic, empty window), and answers
   * its new state.
   */
  @WriteOperation
  public BreakerReport force(@Selector String kind, @Selector String name, String state) {
    CircuitBreaker breaker = find(kind, name);
    String target = state == null ? "" : state.trim().toLowerCase(Locale.ROOT);
    switch (target) {
      case "open" -> breaker.forceOpen();
      case "closed" -> breaker.forceClosed();
      default -> throw new InvalidEndpointRequestException("state must be \"open\" or \"closed\"",
          "state must be \"open\" or \"closed\"");
    }
    return BreakerReport.of(breaker);
  }

  private CircuitBreaker find(String kind, String name) {
    Map<String, CircuitBreaker> known = switch (kind) {
      case "breakers" -> breakers.toolBreakers();
      case "families" -> breakers.familyBreakers();
      default -> throw new InvalidEndpointRequestException("kind must be breakers or families",
          "kind must be breakers or families");
    };
    CircuitBreaker breaker = known.get(name);
    if (breaker == null) {
      String message = "No " + ("breakers".equals(kind) ? "tool breaker" : "family breaker")
          + " of that name has been created; known: " + new TreeSet<>(known.keySet());
      throw new InvalidEndpointRequestException(message, message);
    }
    return breaker;
  }

  private static Map<String, BreakerReport> reports(Map<String, CircuitBreaker> breakers) {
    Map<String, BreakerReport> reports = new TreeMap<>();
    breakers.forEach((name, breaker) -> reports.put(name, BreakerReport.of(breaker)));
    return reports;
  }

  /** What {@code GET /actuator/breakwater} answers. */
  public record Report(Map<String, BreakerReport> breakers, Map<String, BreakerReport> families,
      Map<String, BudgetReport> retryBudgets, Map<String, Object> limits) {}

  /** One breaker, as its {@link CircuitBreaker#snapshot()} reads now. */
  public record BreakerReport(String state, double failureRate, double slowCallRate, long calls, long failedCalls,
      long slowCalls) {

    static BreakerReport of(CircuitBreaker breaker) {
      breaker.state(); // an OPEN breaker whose open duration has passed reports HALF_OPEN
      CircuitBreaker.Snapshot s = breaker.snapshot();
      return new BreakerReport(s.state().name(), s.failureRate(), s.slowCallRate(), s.calls(), s.failedCalls(),
          s.slowCalls());
    }
  }

  /** One retry budget: the tokens (retries) it holds now. */
  public record BudgetReport(double level) {}

  /**
   * What the endpoint lists under {@code limits}: the application's concurrency and rate limits, by name, each as a
   * small map of what it holds now. The starter's lists the {@code Limits} bean's: under {@code concurrency}, each
   * limit's {@code limit}, {@code inFlight} and {@code queued}; under {@code rate}, its {@code availableRequests},
   * {@code availableTokens} and {@code queued}. A bean of the application's own replaces it.
   */
  @FunctionalInterface
  public interface LimitsReport {
    /** The limits by name, each a map that Jackson can write. */
    Map<String, Object> limits();
  }
}
