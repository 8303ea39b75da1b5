package io.breakwater.internal.boot;

import static io.breakwater.internal.boot.FromProperties.checked;
import static io.breakwater.internal.boot.FromProperties.ifSet;

import io.breakwater.boot.BreakwaterProperties;
import io.breakwater.boot.BreakwaterProperties.BudgetSettings;
import io.breakwater.breaker.BreakerStateStore;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import io.breakwater.redis.RedisBreakerStateStore;
import io.breakwater.redis.RedisConcurrencyLimit;
import io.breakwater.redis.RedisIdempotencyStore;
import io.breakwater.redis.RedisRateLimit;
import io.breakwater.redis.RedisRetryBudget;
import io.breakwater.retry.RetryBudget;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.redisson.api.RedissonClient;
import org.redisson.api.RedissonReactiveClient;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Redis-backed stores on the application's own {@code RedissonClient}, when {@code breakwater-redis-store} is on the
 * class path and the application (or Redisson's starter) defines a client: the idempotency store (unless
 * {@code breakwater.idempotency.store} is {@code memory}), and, for what is configured as shared, the breakers'
 * state store, retry budgets and limits. The stores are closed with the context; the client is the application's.
 */
@AutoConfiguration(afterName = {"org.redisson.spring.starter.RedissonAutoConfiguration",
    "org.redisson.spring.starter.RedissonAutoConfigurationV2",
    "org.redisson.spring.starter.RedissonAutoConfigurationV4"})
@ConditionalOnClass({RedisIdempotencyStore.class, RedissonClient.class})
@ConditionalOnBean(RedissonClient.class)
@EnableConfigurationProperties(BreakwaterProperties.class)
public class BreakwaterRedisAutoConfiguration {

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean(IdempotencyStore.class)
  @Conditional(IdempotencyInRedis.class)
  RedisIdempotencyStore breakwaterIdempotencyStore(RedissonClient redisson, BreakwaterProperties properties) {
    BreakwaterProperties.RedisSettings redis = properties.idempotency().redis();
    return checked("breakwater.idempotency.redis", () -> {
      RedisIdempotencyStore.Builder b = RedisIdempotencyStore.builder(redisson.reactive());
      ifSet(redis.keyPrefix(), b::keyPrefix);
      ifSet(redis.channel(), b::channel);
      ifSet(redis.operationTimeout(), b::operationTimeout);
      return b.build();
    });
  }

  @Bean
  @ConditionalOnMissingBean
  SharedStores breakwaterSharedStores(RedissonClient redisson) {
    return new RedisStores(redisson.reactive());
  }

  /** The shared stores on Redis; budgets are closed with the context. */
  static final class RedisStores implements SharedStores, DisposableBean {
    private final RedissonReactiveClient redisson;
    private final List<RedisRetryBudget> budgets = new CopyOnWriteArrayList<>();
    private final BreakerStateStore breakerStore;

    RedisStores(RedissonReactiveClient redisson) {
      this.redisson = redisson;
      this.breakerStore = RedisBreakerStateStore.create(redisson);
    }

    @Override
    public BreakerStateStore breakerStateStore() {
      return breakerStore;
    }

    @Override
    public RetryBudget retryBudget(String name, BudgetSettings settings) {
      RedisRetryBudget budget = RedisRetryBudget.builder(redisson, name).ratio(settings.ratio())
          .minRetriesPerSecond(settings.minRetriesPerSecond()).build();
      budgets.add(budget);
      return budget;
    }

    @Override
    public ConcurrencyLimit concurrencyLimit(ConcurrencyLimit template, @Nullable Duration lease) {
      RedisConcurrencyLimit.Builder b = RedisConcurrencyLimit.builder(redisson, template);
      ifSet(lease, b::lease);
      return b.build();
    }

    @Override
    public RateLimit rateLimit(RateLimit template) {
      return RedisRateLimit.builder(redisson, template).build();
    }

    @Override
    public void destroy() {
      budgets.forEach(RedisRetryBudget::close);
    }
  }

  /** {@code breakwater.idempotency.store} is {@code auto} (the default) or {@code redis}. */
  static final class IdempotencyInRedis extends SpringBootCondition {
    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
      String store = context.getEnvironment().getProperty("breakwater.idempotency.store", "auto");
      return "memory".equalsIgnoreCase(store.trim())
          ? ConditionOutcome.noMatch("breakwater.idempotency.store is memory")
          : ConditionOutcome.match("breakwater.idempotency.store is " + store);
    }
  }
}
