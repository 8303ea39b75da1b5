package io.breakwater.boot;

import io.breakwater.internal.boot.UnknownNameException;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The concurrency and rate limits configured under {@code breakwater.limits}, by name; a {@code ConcurrencyLimit} or
 * {@code RateLimit} bean wins over the configuration of the same name. Each is built, and so validated, at start-up,
 * and is the one instance every caller of that name shares.
 *
 * <pre>{@code
 * Mono<Offers> offers = flights.search(query)
 *     .transformDeferred(limitedBy(limits.concurrency("flights")))
 *     .transformDeferred(throttledBy(limits.rate("flights-api")));
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class Limits {

  private final Map<String, ConcurrencyLimit> concurrency;
  private final Map<String, RateLimit> rate;

  public Limits(Map<String, ConcurrencyLimit> concurrency, Map<String, RateLimit> rate) {
    this.concurrency = Map.copyOf(concurrency);
    this.rate = Map.copyOf(rate);
  }

  /**
   * The concurrency limit {@code name}.
   *
   * @throws IllegalArgumentException if none of that name is configured, saying which property to add
   */
  public ConcurrencyLimit concurrency(String name) {
    ConcurrencyLimit limit = concurrency.get(Objects.requireNonNull(name, "name"));
    if (limit == null) {
      throw notConfigured("concurrency", name, concurrency.keySet(), "limit: 10");
    }
    return limit;
  }

  /**
   * The rate limit {@code name}.
   *
   * @throws IllegalArgumentException if none of that name is configured, saying which property to add
   */
  public RateLimit rate(String name) {
    RateLimit limit = rate.get(Objects.requireNonNull(name, "name"));
    if (limit == null) {
      throw notConfigured("rate", name, rate.keySet(), "requests: 60");
    }
    return limit;
  }

  /** The names of the configured concurrency limits. */
  public Set<String> concurrencyNames() {
    return concurrency.keySet();
  }

  /** The names of the configured rate limits. */
  public Set<String> rateNames() {
    return rate.keySet();
  }

  private static IllegalArgumentException notConfigured(String kind, String name, Set<String> names, String example) {
    return new UnknownNameException(kind + " limit", name, names, "add breakwater.limits." + kind + "[" + name
        + "] (e.g. " + example + ") to application.yml, or define a bean named after it");
  }
}
