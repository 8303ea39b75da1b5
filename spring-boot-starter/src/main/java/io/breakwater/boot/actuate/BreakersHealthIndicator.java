package io.breakwater.boot.actuate;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Status;
import reactor.core.publisher.Mono;

/**
 * The Actuator health contributor {@code breakwater}: {@code UP} while every breaker of the registry is
 * {@code CLOSED}; the configured status ({@code DEGRADED} by default, or {@code DOWN}) while any is {@code OPEN} or
 * {@code HALF_OPEN}. The details give each tool and family breaker's state.
 *
 * <p>{@code DEGRADED} is not one of Spring's statuses: it shows on {@code /actuator/health/breakwater} but leaves the
 * application's aggregate status {@code UP}, unless {@code management.endpoint.health.status.order} ranks it (e.g.
 * {@code down, out-of-service, degraded, up, unknown}). An open breaker of a third-party tool rarely means this
 * instance should be taken out of service, which is why {@code DOWN} is an opt-in
 * ({@code breakwater.health.open-status: DOWN}).
 *
 * <pre>{@code
 * new BreakersHealthIndicator(registry, new Status("DEGRADED"));
 * }</pre>
 */
public final class BreakersHealthIndicator implements ReactiveHealthIndicator {

  private final CircuitBreakerRegistry registry;
  private final Status openStatus;

  public BreakersHealthIndicator(CircuitBreakerRegistry registry, Status openStatus) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.openStatus = Objects.requireNonNull(openStatus, "openStatus");
  }

  @Override
  public Mono<Health> health() {
    return Mono.fromSupplier(this::check);
  }

  private Health check() {
    Map<String, String> tools = states(registry.toolBreakers());
    Map<String, String> families = states(registry.familyBreakers());
    boolean allClosed = tools.values().stream().allMatch(CLOSED::equals)
        && families.values().stream().allMatch(CLOSED::equals);
    return Health.status(allClosed ? Status.UP : openStatus)
        .withDetail("breakers", tools)
        .withDetail("families", families)
        .build();
  }

  private static final String CLOSED = CircuitBreaker.State.CLOSED.name();

  private static Map<String, String> states(Map<String, CircuitBreaker> breakers) {
    Map<String, String> states = new TreeMap<>();
    breakers.forEach((name, breaker) -> states.put(name, breaker.state().name()));
    return states;
  }
}
