package io.breakwater.redis;

import java.util.ArrayList;
import java.util.List;
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
    return client.reactive();
  }

  @Override
  public void close() {
    clients.forEach(RedissonClient::shutdown);
  }
}
