package io.breakwater.breaker;

import io.breakwater.internal.breaker.GuardOperator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;

/**
 * One breaker per tool, and one per family of tools that share a backend: {@code gmail.send} and {@code gmail.list}
 * each have their own breaker and share the {@code gmail} family breaker. An open family rejects every tool of the
 * family (the exception names the family); an open tool breaker rejects only that tool. Both see every call that
 * reaches them, and a call the family rejects never reaches (and never counts against) the tool breaker.
 *
 * <pre>{@code
 * CircuitBreakerRegistry breakers = CircuitBreakerRegistry.builder()
 *     .breakers(name -> CircuitBreaker.builder(name).failureRateThreshold(0.3).build())
 *     .build();
 *
 * Mono<Mail> sent = gmail.send(draft).transformDeferred(guardedBy(breakers, "gmail.send"));
 * }</pre>
 *
 * <p>By default a tool's family is the part of its name before the first {@code '.'}; a name without a dot has no
 * family. Breakers are created on first use and kept for the registry's life, each with its meters: <b>names must come
 * from a closed set</b> (your tools and backends), never from user data or arguments. The registry holds at most
 * {@link Builder#maxBreakers(int) maxBreakers} (default {@value #DEFAULT_MAX_BREAKERS}) tool and family breakers;
 * asking for a new one beyond that fails with an {@link IllegalStateException} instead of growing without bound.
 * Thread-safe.
 */
public final class CircuitBreakerRegistry {

  /** The default bound on the breakers (tools and families together) a registry creates. */
  public static final int DEFAULT_MAX_BREAKERS = 1_000;

  private final Function<String, CircuitBreaker> toolBreakers;
  private final Function<String, CircuitBreaker> familyBreakers;
  private final Function<String, String> familyOf;
  private final ConcurrentMap<String, CircuitBreaker> tools = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, CircuitBreaker> families = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, GuardOperator<?>> guards = new ConcurrentHashMap<>();
  private final int maxBreakers;
  private final AtomicInteger created = new AtomicInteger();

  private CircuitBreakerRegistry(Builder b) {
    this.toolBreakers = b.toolBreakers;
    this.familyBreakers = b.familyBreakers != null ? b.familyBreakers : b.toolBreakers;
    this.familyOf = b.familyOf;
    this.maxBreakers = b.maxBreakers;
  }

  /** A registry of breakers with default settings, families by the prefix before the first {@code '.'}. */
  public static CircuitBreakerRegistry ofDefaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The default family of a tool: its name up to the first {@code '.'}; {@code null} (no family) without one. */
  public static @Nullable String prefixFamily(String toolName) {
    int dot = toolName.indexOf('.');
    return dot <= 0 ? null : toolName.substring(0, dot);
  }

  /**
   * The breaker of {@code toolName}, created on first use.
   *
   * @throws IllegalStateException if it is new and the registry already holds {@code maxBreakers} breakers
   */
  public CircuitBreaker breaker(String toolName) {
    Objects.requireNonNull(toolName, "toolName");
    return tools.computeIfAbsent(toolName, name -> create(toolBreakers, name));
  }

  /** The family breaker {@code toolName} belongs to, created on first use; empty if the tool has no family. */
  public Optional<CircuitBreaker> family(String toolName) {
    String family = familyOf.apply(toolName);
    return family == null ? Optional.empty() : Optional.of(familyBreaker(family));
  }

  /** The breaker of the family named {@code family} (not a tool's name), created on first use. */
  public CircuitBreaker familyBreaker(String family) {
    Objects.requireNonNull(family, "family");
    return families.computeIfAbsent(family, name -> create(familyBreakers, name));
  }

  /** The tool breakers created so far, by tool name: a snapshot, for reporting. */
  public Map<String, CircuitBreaker> toolBreakers() {
    return Map.copyOf(tools);
  }

  /** The family breakers created so far, by family name: a snapshot, for reporting. */
  public Map<String, CircuitBreaker> familyBreakers() {
    return Map.copyOf(families);
  }

  /**
   * The guard of {@code toolName}: its family breaker (if any), then its own. What
   * {@link io.breakwater.Breakwater#guardedBy(CircuitBreakerRegistry, String)} returns.
   */
  @SuppressWarnings("unchecked")
  public <T> Function<Publisher<T>, Publisher<T>> guard(String toolName) {
    return (Function<Publisher<T>, Publisher<T>>) (Function<?, ?>) guards.computeIfAbsent(toolName,
        name -> GuardOperator.of(family(name).orElse(null), breaker(name)));
  }

  private CircuitBreaker create(Function<String, CircuitBreaker> factory, String name) {
    if (created.incrementAndGet() > maxBreakers) {
      created.decrementAndGet();
      throw new IllegalStateException("CircuitBreakerRegistry already holds " + maxBreakers + " breakers, its bound, "
          + "and was asked for a new one: breaker names must come from a closed set (tool and backend names, never "
          + "user data); raise maxBreakers(..) if there really are more");
    }
    CircuitBreaker breaker;
    try {
      breaker = Objects.requireNonNull(factory.apply(name), "breaker factory returned null");
    } catch (RuntimeException e) {
      created.decrementAndGet();
      throw e;
    }
    if (!breaker.name().equals(name)) {
      throw new IllegalStateException("The breaker factory was asked for '" + name + "' and built '"
          + breaker.name() + "': build it with CircuitBreaker.builder(name)");
    }
    return breaker;
  }

  /** Builds a {@link CircuitBreakerRegistry}. */
  public static final class Builder {
    private Function<String, CircuitBreaker> toolBreakers = CircuitBreaker::ofDefaults;
    private @Nullable Function<String, CircuitBreaker> familyBreakers;
    private Function<String, String> familyOf = CircuitBreakerRegistry::prefixFamily;
    private int maxBreakers = DEFAULT_MAX_BREAKERS;

    private Builder() {}

    /**
     * The most breakers (tools and families together) the registry creates; default
     * {@value #DEFAULT_MAX_BREAKERS}. Each breaker and its meters live as long as the registry.
     */
    public Builder maxBreakers(int maxBreakers) {
      if (maxBreakers < 1) {
        throw new IllegalArgumentException("maxBreakers is " + maxBreakers + ": give at least 1, e.g. the number of "
            + "tools plus their families");
      }
      this.maxBreakers = maxBreakers;
      return this;
    }

    /** Builds the breaker of a tool (and of a family, unless {@link #familyBreakers} is set) from its name. */
    public Builder breakers(Function<String, CircuitBreaker> factory) {
      this.toolBreakers = Objects.requireNonNull(factory, "factory");
      return this;
    }

    /** Builds the breaker of a family from its name; default: the same as {@link #breakers}. */
    public Builder familyBreakers(Function<String, CircuitBreaker> factory) {
      this.familyBreakers = Objects.requireNonNull(factory, "factory");
      return this;
    }

    /** The family of a tool name, {@code null} for none; default {@link #prefixFamily}. */
    public Builder familyOf(Function<String, String> familyOf) {
      this.familyOf = Objects.requireNonNull(familyOf, "familyOf");
      return this;
    }

    public CircuitBreakerRegistry build() {
      return new CircuitBreakerRegistry(this);
    }
  }
}
