package io.breakwater.examples.idempotency;

import io.breakwater.redis.RedisIdempotencyStore;
import java.time.Duration;
import org.redisson.Redisson;
import org.redisson.api.RedissonReactiveClient;
import org.redisson.config.Config;

/**
 * A Redis idempotency store for a primary with a replica behind Sentinel, and the Redisson settings that hold on two
 * shared cores: the snippets of {@code docs/redis.md}. {@code DurableRedisStoreTest} builds them.
 */
public final class DurableRedisStore {

  private DurableRedisStore() {}

  /** Redisson settings for a small machine (2 cores shared with the application). */
  // snippet:redis-two-cores
  public static Config smallMachine(String address) {
    Config config = new Config()
        .setThreads(2)                          // Redisson's listener pool (default 16)
        .setNettyThreads(4);                    // event loops (default 32)
    config.useSingleServer().setAddress(address)
        .setConnectionPoolSize(16)
        .setConnectionMinimumIdleSize(16)       // every connection open before the first burst
        .setTimeout(3_000)                      // Breakwater bounds each operation anyway (storeTimeout, 2 s)
        .setRetryAttempts(1);                   // few resends: a late resend holds a claim until its lease ends
    return config;
  }
  // end-snippet

  // snippet:redis-durability
  public static RedisIdempotencyStore replicated(RedissonReactiveClient redisson) {
    RedisIdempotencyStore store = RedisIdempotencyStore.builder(redisson)
        .waitForReplicas(1, Duration.ofMillis(500))      // WAIT 1: a claim is on a replica before it is granted
        .build();
    return store;
  }
  // end-snippet

  public static RedissonReactiveClient connect(Config config) {
    return Redisson.create(config).reactive();
  }
}
