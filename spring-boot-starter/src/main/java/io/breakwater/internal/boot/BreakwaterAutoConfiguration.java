package io.breakwater.internal.boot;

import static io.breakwater.internal.boot.FromProperties.checked;
import static io.breakwater.internal.boot.FromProperties.path;

import io.breakwater.agent.ToolDescriptor;
import io.breakwater.boot.BreakwaterProperties;
import io.breakwater.boot.BreakwaterProperties.BudgetSettings;
import io.breakwater.boot.BreakwaterProperties.RetrySettings;
import io.breakwater.boot.DeadlineDefaults;
import io.breakwater.boot.Limits;
import io.breakwater.boot.RetryPolicies;
import io.breakwater.boot.ToolDescriptors;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.observation.ObservationRegistry;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import reactor.core.scheduler.Schedulers;

/**
 * Breakwater's core beans from {@code breakwater.*}: deadline defaults, the breaker registry, retry policies and
 * budgets, the idempotency store and policy, concurrency and rate limits, and the tool descriptors, with meters in
 * the application's {@code MeterRegistry} and observations in its {@code ObservationRegistry}. Every bean backs off when the
 * application defines one of the same type.
 */
@AutoConfiguration(after = BreakwaterRedisAutoConfiguration.class, afterName = {
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"})
@EnableConfigurationProperties(BreakwaterProperties.class)
public class BreakwaterAutoConfiguration {

  /** The application's meter registry, else Micrometer's global one (the core's default). */
  static MeterRegistry meters(ObjectProvider<MeterRegistry> registries) {
    return registries.getIfUnique(() -> Metrics.globalRegistry);
  }

  @Bean
  @ConditionalOnMissingBean
  DeadlineDefaults breakwaterDeadlineDefaults(BreakwaterProperties properties) {
    return new DeadlineDefaults(FromProperties.deadlineTemplate(properties.deadline()));
  }

  @Bean
  @ConditionalOnMissingBean
  CircuitBreakerRegistry breakwaterCircuitBreakerRegistry(BreakwaterProperties properties,
      ObjectProvider<MeterRegistry> meters, ObjectProvider<SharedStores> shared) {
    BreakwaterProperties.Breakers breakers = properties.breakers();
    SharedStores stores = breakers.stateStore() == BreakwaterProperties.StateStore.REDIS
        ? required(shared, "breakwater.breakers.state-store", "is redis") : null;
    return FromProperties.breakers(breakers, meters(meters), stores == null ? null : stores.breakerStateStore());
  }

  @Bean
  @ConditionalOnMissingBean
  RetryPolicies breakwaterRetryPolicies(BreakwaterProperties properties, ObjectProvider<MeterRegistry> meterRegistries,
      ObjectProvider<SharedStores> shared, ObjectProvider<RetryPolicy> userPolicies) {
    BreakwaterProperties.Retry retry = properties.retry();
    MeterRegistry meters = meters(meterRegistries);
    Map<String, RetryBudget> budgets = new ConcurrentHashMap<>();
    Function<String, RetryBudget> create = n -> {
      BudgetSettings settings = retry.budgets().get(n);
      String property = path("breakwater.retry.budgets", n);
      if (settings == null) {
        return RetryBudget.ofDefaults();
      }
      if (settings.shared()) {
        SharedStores stores = required(shared, property + ".shared", "is true");
        return checked(property, () -> stores.retryBudget(n, settings));
      }
      return checked(property, () -> RetryBudget.ratio(settings.ratio(), settings.minRetriesPerSecond()));
    };
    Function<String, RetryBudget> budget = name -> budgets.computeIfAbsent(name, create);
    RetrySettings defaults = retry.defaults();
    Function<String, RetryPolicy> build = name -> {
      RetrySettings own = retry.policies().get(name);
      String property = own == null ? "breakwater.retry.defaults" : path("breakwater.retry.policies", name);
      return FromProperties.retryPolicy(name, property, own, defaults,
          budget.apply(FromProperties.budgetName(name, own, defaults)), meters);
    };
    Map<String, RetryPolicy> configured = new LinkedHashMap<>();
    userPolicies.orderedStream().forEach(policy -> configured.put(policy.name(), policy));
    // every configured budget is built now, so that a bad one fails the start rather than the first retry
    retry.budgets().keySet().forEach(name -> budgets.computeIfAbsent(name, create));
    retry.policies().keySet().forEach(name -> configured.computeIfAbsent(name, build));
    return new RetryPolicies(configured, build);
  }

  @Bean
  @ConditionalOnMissingBean
  IdempotencyStore breakwaterIdempotencyStore(BreakwaterProperties properties) {
    if (properties.idempotency().store() == BreakwaterProperties.IdempotencyStoreType.REDIS) {
      throw new InvalidPropertiesException("breakwater.idempotency.store", "is redis, but the application has no "
          + "RedissonClient bean (or breakwater-redis-store is not on the class path): define a RedissonClient bean, "
          + "add io.breakwater:breakwater-redis-store, or set breakwater.idempotency.store to memory", null);
    }
    long maxBytes = properties.idempotency().maxBytes().toBytes();
    return checked("breakwater.idempotency.max-bytes", () -> {
      return IdempotencyStore.inMemory(maxBytes, Schedulers::parallel);
    });
  }

  @Bean
  @ConditionalOnMissingBean
  IdempotencyPolicy breakwaterIdempotencyPolicy(BreakwaterProperties properties, IdempotencyStore store,
      ObjectProvider<MeterRegistry> meters) {
    return FromProperties.idempotencyPolicy(properties.idempotency(), store, meters(meters));
  }

  @Bean
  @ConditionalOnMissingBean
  Limits breakwaterLimits(BreakwaterProperties properties, ObjectProvider<SharedStores> shared,
      ObjectProvider<ConcurrencyLimit> userConcurrencyLimits, ObjectProvider<RateLimit> userRateLimits,
      ObjectProvider<MeterRegistry> meterRegistries) {
    BreakwaterProperties.Limits limits = properties.limits();
    MeterRegistry meters = meters(meterRegistries);
    Map<String, ConcurrencyLimit> concurrency = new LinkedHashMap<>();
    userConcurrencyLimits.orderedStream().forEach(limit -> concurrency.put(limit.name(), limit));
    limits.concurrency().forEach((name, settings) -> concurrency.computeIfAbsent(name, n -> {
      String property = path("breakwater.limits.concurrency", n);
      ConcurrencyLimit template = FromProperties.concurrencyLimit(n, property, settings, meters);
      if (!settings.shared()) {
        return template;
      }
      SharedStores stores = required(shared, property + ".shared", "is true");
      return checked(property, () -> stores.concurrencyLimit(template, settings.lease()));
    }));
    Map<String, RateLimit> rate = new LinkedHashMap<>();
    userRateLimits.orderedStream().forEach(limit -> rate.put(limit.name(), limit));
    limits.rate().forEach((name, settings) -> rate.computeIfAbsent(name, n -> {
      String property = path("breakwater.limits.rate", n);
      RateLimit template = FromProperties.rateLimit(n, property, settings, meters);
      if (!settings.shared()) {
        return template;
      }
      SharedStores stores = required(shared, property + ".shared", "is true");
      return checked(property, () -> stores.rateLimit(template));
    }));
    return new Limits(concurrency, rate);
  }

  @Bean
  @ConditionalOnMissingBean
  ToolDescriptors breakwaterToolDescriptors(BreakwaterProperties properties, CircuitBreakerRegistry breakers,
      RetryPolicies policies, ObjectProvider<IdempotencyPolicy> idempotency, ObjectProvider<MeterRegistry> meters,
      ObjectProvider<ObservationRegistry> observations, ObjectProvider<ToolDescriptor> userDescriptors,
      ObjectProvider<Limits> limits) {
    FromProperties.ToolContext context = new FromProperties.ToolContext(breakers, policies::policy,
        idempotency::getObject, meters(meters), observations.getIfUnique(), limits::getObject);
    Map<String, ToolDescriptor> descriptors = new LinkedHashMap<>();
    userDescriptors.orderedStream().forEach(d -> descriptors.put(d.name(), d));
    Set<String> tools = new HashSet<>(descriptors.keySet());
    tools.addAll(properties.tools().keySet());
    Set<String> families = new HashSet<>();
    descriptors.values().forEach(d -> FromProperties.ifSet(d.family(), families::add));
    properties.tools().forEach((name, tool) -> FromProperties.ifSet(ConfiguredNames.family(name, tool.family()),
        families::add));
    Limits configuredLimits = limits.getIfAvailable();
    ConfiguredNames.check(properties, tools, families, policies.names(),
        configuredLimits == null ? Set.of() : configuredLimits.concurrencyNames(),
        configuredLimits == null ? Set.of() : configuredLimits.rateNames());
    properties.tools().forEach((name, tool) -> descriptors.computeIfAbsent(name,
        n -> FromProperties.tool(n, tool, context)));
    return new ToolDescriptors(descriptors, name -> {
      BreakwaterProperties.Tool tool = properties.tools().get(name);
      if (tool == null) {
        throw new IllegalArgumentException("Tool '" + name + "' is a ToolDescriptor bean, not configured under "
            + "breakwater.tools: change the bean itself");
      }
      return checked(path("breakwater.tools", name), () -> FromProperties.toolBuilder(name, tool, context));
    });
  }

  private static SharedStores required(ObjectProvider<SharedStores> shared, String property, String setting) {
    SharedStores stores = shared.getIfAvailable();
    if (stores == null) {
      throw new InvalidPropertiesException(property, setting + ", but the application has no RedissonClient bean "
          + "(or breakwater-redis-store is not on the class path): define a RedissonClient bean and add "
          + "io.breakwater:breakwater-redis-store, or share nothing", null);
    }
    return stores;
  }
}
