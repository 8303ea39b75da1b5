package io.breakwater.examples.travel;

import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.redis.RedisIdempotencyStore;
import io.breakwater.redis.RedisRetryBudget;
import io.breakwater.retry.RetryBudget;
import java.util.ArrayList;
import java.util.List;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.api.RedissonReactiveClient;
import org.redisson.config.Config;

/** The agent's shared state in Redis: {@code --redis redis://127.0.0.1:6379}. */
final class RedisBacking implements AutoCloseable {

  private final RedissonClient client;
  private final RedissonReactiveClient reactive;
  private final RedisIdempotencyStore store;
  private final List<RedisRetryBudget> budgets = new ArrayList<>();

  private RedisBacking(String address) {
    Config config = new Config();
    config.useSingleServer().setAddress(address).setTimeout(2000).setRetryAttempts(1);
    client = Redisson.create(config);
    reactive = client.reactive();
    store = RedisIdempotencyStore.create(reactive);
  }

  static RedisBacking connect(String address) {
    return new RedisBacking(address);
  }

  IdempotencyStore store() {
    return store;
  }

  /**
   * The idempotency key secret every instance of the agent shares: {@code BREAKWATER_IDEMPOTENCY_SECRET} (base64 of
   * 32 or more bytes), or else a random one for this run, whose keys no other instance would match.
   */
  static byte[] keySecret() {
    String shared = System.getenv("BREAKWATER_IDEMPOTENCY_SECRET");
    if (shared != null) {
      return java.util.Base64.getDecoder().decode(shared);
    }
    byte[] secret = new byte[32];
    new java.security.SecureRandom().nextBytes(secret);
    return secret;
  }

  synchronized RetryBudget retryBudget(String dependency) {
    RedisRetryBudget budget = RedisRetryBudget.builder(reactive, dependency).ratio(0.2).minRetriesPerSecond(10)
        .build();
    budgets.add(budget);
    return budget;
  }

  @Override
  public void close() {
    budgets.forEach(RedisRetryBudget::close);
    store.close();
    client.shutdown();
  }
}
