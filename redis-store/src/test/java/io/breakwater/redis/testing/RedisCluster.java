package io.breakwater.redis.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A 3-master Redis cluster of real {@code redis-server} processes on free loopback ports, built with CLUSTER
 * ADDSLOTS and CLUSTER MEET (no redis-cli needed), torn down by {@link #close()}.
 */
public final class RedisCluster implements AutoCloseable {

  private static final int SLOTS = 16384;

  private final List<RedisProcess> nodes;

  private RedisCluster(List<RedisProcess> nodes) {
    this.nodes = nodes;
  }

  public static RedisCluster start() {
    List<RedisProcess> nodes = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        nodes.add(RedisProcess.start("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", "2000"));
      }
      for (int i = 0; i < nodes.size(); i++) {
        int from = i * SLOTS / nodes.size();
        int to = (i + 1) * SLOTS / nodes.size() - 1;
        String[] command = new String[to - from + 3];
        command[0] = "CLUSTER";
        command[1] = "ADDSLOTS";
        for (int slot = from; slot <= to; slot++) {
          command[slot - from + 2] = Integer.toString(slot);
        }
        check(nodes.get(i).command(command));
      }
      for (int i = 1; i < nodes.size(); i++) {
        check(nodes.get(0).command("CLUSTER", "MEET", "127.0.0.1", Integer.toString(nodes.get(i).port())));
      }
      RedisCluster cluster = new RedisCluster(nodes);
      cluster.awaitOk(Duration.ofSeconds(20));
      return cluster;
    } catch (RuntimeException e) {
      nodes.forEach(RedisProcess::close);
      throw e;
    }
  }

  private static void check(String reply) {
    if (reply.startsWith("ERR:")) {
      throw new IllegalStateException("Cluster set-up failed: " + reply);
    }
  }

  private void awaitOk(Duration timeout) {
    long until = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < until) {
      if (nodes.stream().allMatch(n -> n.command("CLUSTER", "INFO").contains("cluster_state:ok"))) {
        return;
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    throw new IllegalStateException("Cluster did not reach cluster_state:ok: " + nodes.get(0).command("CLUSTER",
        "INFO"));
  }

  /** Seed addresses for Redisson's cluster config. */
  public String[] addresses() {
    return nodes.stream().map(RedisProcess::address).toArray(String[]::new);
  }

  public List<RedisProcess> nodes() {
    return nodes;
  }

  @Override
  public void close() {
    nodes.forEach(RedisProcess::close);
  }
}
