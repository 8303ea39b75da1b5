package io.breakwater.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.idempotency.IdempotencyStore.Acquired;
import io.breakwater.idempotency.IdempotencyStore.Outcome;
import io.breakwater.redis.testing.RedisProcess;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The cost of each durability setting of {@link RedisIdempotencyStore}: p50 and p99 latency of a claim and of a
 * completion one at a time, and claim + complete pairs per second at concurrency 32, on servers with AOF
 * {@code appendfsync always}. A measurement, not a check: run it with {@code -Dbreakwater.durability.calls=5000}.
 * {@code WAITAOF} needs Redis 7.2 or newer and is measured only where the server has it.
 */
@EnabledIfSystemProperty(named = "breakwater.durability.calls", matches = "[1-9][0-9]*")
class DurabilityCostIT {

  private static final int CALLS = Integer.getInteger("breakwater.durability.calls", 0);

  @Test
  void eachDurabilitySettingCosts() {
    try (RedisProcess primary = RedisProcess.start("--appendonly", "yes", "--appendfsync", "always");
        RedisProcess replica = RedisProcess.start("--appendonly", "yes", "--appendfsync", "always", "--replicaof",
            "127.0.0.1", Integer.toString(primary.port()));
        RedisClients clients = RedisClients.forLoad()) {
      awaitReplica(primary);
      System.out.println("| durability | claim p50 | claim p99 | complete p50 | complete p99 | pairs/s at 32 |");
      System.out.println("|---|---|---|---|---|---|");
      measure("primary only (AOF always)", clients, primary, b -> b);
      measure("WAIT 1 replica", clients, primary, b -> b.waitForReplicas(1, Duration.ofSeconds(1)));
      boolean waitAof = !primary.command("COMMAND", "INFO", "WAITAOF").contains("(nil)")
          && primary.command("COMMAND", "INFO", "WAITAOF").length() > 4;
      if (waitAof) {
        measure("WAITAOF local + 1 replica", clients, primary, b -> b.waitForAof(1, 1, Duration.ofSeconds(1)));
      } else {
        System.out.println("| WAITAOF | not available on Redis " + version(primary) + " (needs 7.2) | | | | |");
      }
    }
  }

  private static String version(RedisProcess redis) {
    String info = redis.command("INFO", "server");
    int at = info.indexOf("redis_version:");
    return info.substring(at + 14, info.indexOf('\n', at)).trim();
  }

  private static void awaitReplica(RedisProcess primary) {
    for (int i = 0; i < 100 && !primary.command("INFO", "replication").contains("connected_slaves:1"); i++) {
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    assertThat(primary.command("INFO", "replication")).contains("connected_slaves:1");
  }

  private static void measure(String name, RedisClients clients, RedisProcess primary,
      UnaryOperator<RedisIdempotencyStore.Builder> durability) {
    try (RedisIdempotencyStore store = durability.apply(RedisIdempotencyStore.builder(
        clients.standalone(primary.address())).keyPrefix("bw:cost:" + name.hashCode() + ":")).build()) {
      pairs(store, "warm", CALLS / 5, 32);
      long[] claims = new long[CALLS];
      long[] completes = new long[CALLS];
      for (int i = 0; i < CALLS; i++) {
        String key = "one-" + i;
        long start = System.nanoTime();
        assertThat(store.claim(key, "fp", "owner", Duration.ofSeconds(30)).block()).isEqualTo(new Acquired(false));
        long claimed = System.nanoTime();
        assertThat(store.complete(key, "owner", Outcome.success("{\"id\":1}"), Duration.ofHours(1)).block()).isTrue();
        claims[i] = claimed - start;
        completes[i] = System.nanoTime() - claimed;
      }
      long start = System.nanoTime();
      pairs(store, "load", CALLS, 32);
      double perSecond = CALLS / ((System.nanoTime() - start) / 1e9);
      System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %.0f |%n", name, ms(claims, 0.50), ms(claims, 0.99),
          ms(completes, 0.50), ms(completes, 0.99), perSecond);
    }
  }

  private static void pairs(RedisIdempotencyStore store, String prefix, int calls, int concurrency) {
    Flux.range(0, calls)
        .flatMap(i -> store.claim(prefix + i, "fp", "owner", Duration.ofSeconds(30))
            .then(store.complete(prefix + i, "owner", Outcome.success("{\"id\":1}"), Duration.ofHours(1))),
            concurrency)
        .then(Mono.empty())
        .block(Duration.ofMinutes(5));
  }

  private static String ms(long[] nanos, double quantile) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    return String.format(Locale.ROOT, "%.2f ms", sorted[(int) Math.min(sorted.length - 1,
        Math.floor(quantile * sorted.length))] / 1e6);
  }
}
