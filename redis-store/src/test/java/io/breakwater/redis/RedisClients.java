package io.breakwater.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.api.RedissonReactiveClient;
import org.redisson.config.Config;

/** Redisson clients for tests: short timeouts, so faults show up quickly. */
final class RedisClients implements AutoCloseable {

  /** The idempotency key secret every instance in these tests shares. */
  static final byte[] KEY_SECRET = "the shared 32-byte secret for IT".getBytes(
      java.nio.charset.StandardCharsets.US_ASCII);

  private final List<RedissonClient> clients = new ArrayList<>();
  private final java.util.Map<RedissonReactiveClient, RedissonClient> byReactive = new java.util.IdentityHashMap<>();
  private final int minimumIdle;
  private final int timeoutMillis;

  RedisClients() {
    this(2, 3000);
  }

  private RedisClients(int minimumIdle, int timeoutMillis) {
    this.minimumIdle = minimumIdle;
    this.timeoutMillis = timeoutMillis;
  }

  /**
   * Clients for load tests: every pooled connection open before the first command and a longer command timeout, so
   * that hundreds of commands sent at once on a busy machine wait for a connection instead of timing out.
   */
  static RedisClients forLoad() {
    return new RedisClients(16, 10_000);
  }

  RedissonReactiveClient standalone(String address) {
    Config config = new Config();
    config.useSingleServer()
        .setAddress(address)
        .setConnectionMinimumIdleSize(minimumIdle)
        .setConnectionPoolSize(16)
        .setTimeout(timeoutMillis)
        .setRetryAttempts(1);
    return add(config);
  }

  RedissonReactiveClient cluster(String... addresses) {
    Config config = new Config();
    config.useClusterServers()
        .addNodeAddress(addresses)
        .setMasterConnectionMinimumIdleSize(minimumIdle)
        .setMasterConnectionPoolSize(16)
        .setTimeout(timeoutMillis)
        .setRetryAttempts(1);
    return add(config);
  }

  private RedissonReactiveClient add(Config config) {
    // Several clients share 2 cores in these tests: a few threads each, not Redisson's defaults of 16 and 32.
    config.setThreads(2).setNettyThreads(4);
    RedissonClient client = Redisson.create(config);
    clients.add(client);
    RedissonReactiveClient reactive = client.reactive();
    byReactive.put(reactive, client);
    return reactive;
  }

  /** Shuts one client down at once, as if its process died: it sends nothing more. */
  void shutdown(RedissonReactiveClient client) {
    RedissonClient c = byReactive.get(client);
    if (c == null) {
      throw new IllegalArgumentException("not a client of these tests");
    }
    c.shutdown(0, 0, TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    clients.stream().filter(c -> !c.isShutdown()).forEach(RedissonClient::shutdown);
  }
}
