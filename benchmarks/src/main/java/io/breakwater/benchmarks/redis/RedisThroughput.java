package io.breakwater.benchmarks.redis;

import static io.breakwater.Breakwater.idempotentBy;

import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.redis.RedisIdempotencyStore;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * P6: idempotent calls through {@code RedisIdempotencyStore} against {@code redis-benchmark}'s SET, on one
 * {@code redis-server} started here, at the same concurrency. Needs {@code redis-server} and {@code redis-benchmark}
 * on the PATH.
 *
 * <p>Usage: {@code java -cp benchmarks.jar io.breakwater.benchmarks.redis.RedisThroughput [concurrency] [calls]}
 * (defaults 32 and 100 000). Prints a Markdown table.
 *
 * <p>With {@code taskset} on the PATH and two or more CPUs, the clients (this JVM, every thread of it, and
 * {@code redis-benchmark}) run on CPU 0 and {@code redis-server} on CPU 1, as issue 20 asks: the ratio then reflects
 * each client's cost, not the two sharing a core with the server. The table's first line says whether it was pinned;
 * {@code -Dbreakwater.redis.pin=false} measures unpinned. Redisson runs with 2 listener threads and 4 event loops
 * (the small-machine settings of docs/redis.md); {@code -Dbreakwater.redis.threads} and
 * {@code -Dbreakwater.redis.nettyThreads} change them.
 */
public final class RedisThroughput {

  public static void main(String[] args) throws Exception {
    int concurrency = args.length > 0 ? Integer.parseInt(args[0]) : 32;
    int calls = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Path dir = Files.createTempDirectory("bw-redis-bench");
    boolean pinned = pinClientsToCpuZero();
    Process redis = new ProcessBuilder(pinned(pinned, "1", "redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
        "--save", "", "--appendonly", "no", "--dir", dir.toString()))
        .redirectErrorStream(true).redirectOutput(dir.resolve("redis.log").toFile()).start();
    try {
      Thread.sleep(500);
      double setOps = redisBenchmark(port, concurrency, calls, pinned);

      // Redisson's defaults (32 event loops, 16 listener threads) put 48 threads on the one core the client is pinned
      // to; docs/redis.md's small-machine settings, overridable to compare
      Config config = new Config()
          .setThreads(Integer.getInteger("breakwater.redis.threads", 2))
          .setNettyThreads(Integer.getInteger("breakwater.redis.nettyThreads", 4));
      config.useSingleServer().setAddress("redis://127.0.0.1:" + port)
          .setConnectionMinimumIdleSize(concurrency).setConnectionPoolSize(concurrency);
      RedissonClient client = Redisson.create(config);
      try (RedisIdempotencyStore store = RedisIdempotencyStore.create(client.reactive())) {
        byte[] secret = new byte[32];
        new java.security.SecureRandom().nextBytes(secret);
        IdempotencyPolicy policy = IdempotencyPolicy.builder(store).keySecret(secret).build();
        run(policy, concurrency, calls / 10, "warm-up");          // JIT and scripts loaded
        double missOps = run(policy, concurrency, calls, "miss");  // new keys: claim + complete
        double hitOps = run(policy, concurrency, calls, "miss");   // the same keys again: claim answers Done
        System.out.printf(Locale.ROOT, "| measure (concurrency %d, %d calls%s) | ops/s | ratio to SET |%n",
            concurrency, calls, pinned ? ", clients on CPU 0, redis-server on CPU 1" : ", not pinned");
        System.out.println("|---|---|---|");
        System.out.printf(Locale.ROOT, "| redis-benchmark SET | %.0f | 1.00 |%n", setOps);
        System.out.printf(Locale.ROOT, "| idempotentBy hit (1 round trip) | %.0f | %.2f |%n", hitOps, hitOps / setOps);
        System.out.printf(Locale.ROOT, "| idempotentBy miss (2 round trips) | %.0f | %.2f |%n", missOps,
            missOps / setOps);
      } finally {
        client.shutdown();
      }
    } finally {
      redis.destroyForcibly();
      redis.waitFor(5, TimeUnit.SECONDS);
    }
  }

  private static double run(IdempotencyPolicy policy, int concurrency, int calls, String prefix) {
    long start = System.nanoTime();
    Flux.range(0, calls)
        .flatMap(i -> Mono.just(i).transformDeferred(idempotentBy(
            IdempotencyKey.explicit("bench", prefix + "-" + i, i), policy, Integer.class)), concurrency)
        .blockLast(Duration.ofMinutes(5));
    return calls / ((System.nanoTime() - start) / 1e9);
  }

  /** Pins every thread of this JVM (and so the threads it starts later) to CPU 0; false if that is not possible. */
  private static boolean pinClientsToCpuZero() {
    if (Runtime.getRuntime().availableProcessors() < 2 || !Boolean.parseBoolean(
        System.getProperty("breakwater.redis.pin", "true"))) {
      return false;
    }
    try {
      Process taskset = new ProcessBuilder("taskset", "-a", "-cp", "0",
          Long.toString(ProcessHandle.current().pid())).redirectErrorStream(true).start();
      taskset.getInputStream().readAllBytes();
      return taskset.waitFor() == 0;
    } catch (IOException e) {
      return false;   // no taskset: measured unpinned, and the table says so
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** {@code command} run on {@code cpu} when pinning, as is otherwise. */
  private static List<String> pinned(boolean pinned, String cpu, String... command) {
    List<String> line = new ArrayList<>();
    if (pinned) {
      line.addAll(List.of("taskset", "-c", cpu));
    }
    line.addAll(List.of(command));
    return line;
  }

  private static double redisBenchmark(int port, int concurrency, int calls, boolean pinned) throws IOException,
      InterruptedException {
    Process bench = new ProcessBuilder(pinned(pinned, "0", "redis-benchmark", "-h", "127.0.0.1", "-p",
        Integer.toString(port), "-t", "set", "-c", Integer.toString(concurrency), "-n", Integer.toString(calls), "-q"))
        .redirectErrorStream(true).start();
    String output = new String(bench.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    bench.waitFor();
    Matcher m = Pattern.compile("SET: ([0-9.]+) requests per second").matcher(output.replace('\r', '\n'));
    if (!m.find()) {
      throw new IllegalStateException("redis-benchmark said: " + output);
    }
    return Double.parseDouble(m.group(1));
  }
}
