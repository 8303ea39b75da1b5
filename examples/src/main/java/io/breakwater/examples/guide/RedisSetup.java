package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.*;

import io.breakwater.breaker.BreakerStateStore;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.examples.guide.Domain.Receipt;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.redis.RedisBreakerStateStore;
import io.breakwater.redis.RedisIdempotencyStore;
import io.breakwater.redis.RedisRetryBudget;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import java.net.MalformedURLException;
import java.net.URL;
import org.redisson.Redisson;
import org.redisson.api.RedissonReactiveClient;
import org.redisson.config.Config;
import reactor.core.publisher.Mono;

/** The snippets of {@code docs/redis.md}; {@code RedisSetupIT} runs them against a redis-server it starts. */
public final class RedisSetup {

  private RedisSetup() {}

  // snippet:redis-client
  public static RedissonReactiveClient connect(String address) {
    Config config = new Config();
    config.useSingleServer().setAddress(address);              // e.g. redis://127.0.0.1:6379
    RedissonReactiveClient redisson = Redisson.create(config).reactive();
    return redisson;
  }
  // end-snippet

  /** Refunds made once across every instance that shares the Redis server. */
  // snippet:redis-idempotency
  public static final class SharedRefunds {

    private final IdempotencyPolicy policy;

    public SharedRefunds(RedissonReactiveClient redisson, byte[] keySecret) {
      this.policy = IdempotencyPolicy.builder(RedisIdempotencyStore.create(redisson))  // once per process
          .keySecret(keySecret)            // the same 32+ random bytes on every instance, from your secret store
          .build();
    }

    public Mono<Receipt> refundOnce(Mono<Receipt> refund, IdempotencyKey key) {
      return refund.transformDeferred(idempotentBy(key, policy, Receipt.class));
    }
  }
  // end-snippet

  // snippet:redis-breaker
  public static CircuitBreaker searchBreaker(RedissonReactiveClient redisson) {
    BreakerStateStore shared = RedisBreakerStateStore.create(redisson);
    CircuitBreaker search = CircuitBreaker.builder("search").stateStore(shared).build();
    return search;
  }
  // end-snippet

  // snippet:redis-retry-budget
  public static RetryPolicy flightsPolicy(RedissonReactiveClient redisson) {
    RetryBudget flights = RedisRetryBudget.builder(redisson, "flights").ratio(0.1).minRetriesPerSecond(10).build();
    RetryPolicy policy = RetryPolicy.builder().name("flights").budget(flights).build();
    return policy;
  }
  // end-snippet

  // snippet:redis-topology-cluster
  public static Config cluster() {
    Config config = new Config();
    config.useClusterServers().addNodeAddress("redis://10.0.0.1:7000", "redis://10.0.0.2:7000", "redis://10.0.0.3:7000");
    return config;
  }
  // end-snippet

  // snippet:redis-topology-sentinel
  public static Config sentinel() {
    Config config = new Config();
    config.useSentinelServers().setMasterName("breakwater").addSentinelAddress("redis://10.0.0.1:26379");
    return config;
  }
  // end-snippet

  // snippet:redis-topology-tls
  public static Config tls(String secret) throws MalformedURLException {
    Config config = new Config();
    config.useSingleServer().setAddress("rediss://redis.internal:6380")
        .setSslTruststore(new URL("file:/etc/breakwater/truststore.p12")).setSslTruststorePassword(secret);
    return config;
  }
  // end-snippet

  // snippet:redis-topology-acl
  public static Config acl(String secret) {
    Config config = new Config();
    config.useSingleServer().setAddress("redis://redis.internal:6379")
        .setUsername("breakwater").setPassword(secret);
    return config;
  }
  // end-snippet
}
