package io.breakwater.benchmarks.redis;

import static io.breakwater.Breakwater.idempotentBy;

import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.internal.redis.IdempotencyScripts;
import io.breakwater.redis.RedisIdempotencyStore;
import com.sun.management.OperatingSystemMXBean;
import com.sun.management.ThreadMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.jspecify.annotations.Nullable;
import org.redisson.Redisson;
import org.redisson.api.RBucket;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * P6: idempotent calls through {@code RedisIdempotencyStore} against {@code redis-benchmark}'s SET, on one
 * {@code redis-server} started here, at the same concurrency. Needs {@code redis-server} and {@code redis-benchmark}
 * on the PATH.
 *
 * <p>Usage: {@code java -cp benchmarks.jar io.breakwater.benchmarks.redis.RedisThroughput [concurrency] [calls]}
 * (defaults 32 and 200 000: the warm-up rounds are a fifth of the calls each, and with rounds of 10 000 the JIT was still
 * compiling Redisson's batch paths during the measured runs). Prints two Markdown tables: the rates and their ratios to SET, then what each operation
 * cost, figures that do not depend on how busy the machine is: the client's CPU time (this JVM's process CPU time, or
 * {@code redis-benchmark}'s), the server's CPU time, this JVM's context switches (summed over its threads, from
 * {@code /proc}), its allocation (every thread's allocated bytes) and the commands Redis ran
 * ({@code INFO commandstats}), each divided by the calls. {@code -Dbreakwater.redis.jfr=<dir>} records the miss run and
 * the hit run with JFR into {@code <dir>/miss.jfr} and {@code <dir>/hit.jfr}.
 *
 * <p>With {@code taskset} on the PATH and two or more CPUs, the clients (this JVM, every thread of it, and
 * {@code redis-benchmark}) run on CPU 0 and {@code redis-server} on CPU 1, as issue 20 asks: the ratio then reflects
 * each client's cost, not the two sharing a core with the server. The table's first line says whether it was pinned;
 * {@code -Dbreakwater.redis.pin=false} measures unpinned. Redisson runs with 2 listener threads and 4 event loops
 * (the small-machine settings of docs/redis.md); {@code -Dbreakwater.redis.threads} and
 * {@code -Dbreakwater.redis.nettyThreads} change them.
 */
public final class RedisThroughput {

  private static final Duration STORE_TIMEOUT = Duration.ofSeconds(10);

  public static void main(String[] args) throws Exception {
    int concurrency = args.length > 0 ? Integer.parseInt(args[0]) : 32;
    int calls = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
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
      Path redisCpu = dir.resolve("redis-benchmark.times");
      ServerCost setServer = ServerCost.start(redis, port);
      double setOps = redisBenchmark(port, concurrency, calls, pinned, redisCpu);
      long[] setCpu = redisBenchmarkCpuNanos(redisCpu);
      Cost setCost = new Cost(setOps, calls, setCpu[0] + setCpu[1], setCpu[1], -1, -1, -1, setServer.end(calls), "");

      // Redisson's defaults (32 event loops, 16 listener threads) put 48 threads on the one core the client is pinned
      // to; docs/redis.md's small-machine settings, overridable to compare
      Config config = new Config()
          .setThreads(Integer.getInteger("breakwater.redis.threads", 2))
          .setNettyThreads(Integer.getInteger("breakwater.redis.nettyThreads", 4));
      config.useSingleServer().setAddress("redis://127.0.0.1:" + port)
          .setConnectionMinimumIdleSize(concurrency).setConnectionPoolSize(concurrency);
      RedissonClient client = Redisson.create(config);
      // 10 s store timeouts, as SustainedMissesIT: on a starved machine the whole client stalls for seconds at a time
      // (docs/redis.md), and a run that stops on a timeout measures nothing; the timers cost the same at any length
      try (RedisIdempotencyStore store = RedisIdempotencyStore.builder(client.reactive())
          .operationTimeout(STORE_TIMEOUT).build()) {
        byte[] secret = new byte[32];
        new java.security.SecureRandom().nextBytes(secret);
        IdempotencyPolicy policy = IdempotencyPolicy.builder(store).keySecret(secret).storeTimeout(STORE_TIMEOUT)
            .build();
        // Scripts loaded and both paths compiled: rounds of misses and hits until the JIT's threads spend under 5 % of
        // a round's CPU. The client shares one core with them; after 5 000 misses they still took 220 µs of CPU per
        // measured miss, and after 10 000 misses and hits 150 µs.
        int warmUp = Math.max(calls / 5, 10_000);
        int rounds = 0;
        double compiling = 1;
        while (rounds < MAX_WARM_UP_ROUNDS && compiling >= 0.05) {
          Map<String, long[]> before = threadStats();
          String prefix = "warm-up-" + rounds++;
          run(policy, concurrency, warmUp, prefix, redis, port, null);
          run(policy, concurrency, warmUp, prefix, redis, port, null);
          compiling = compilerShare(before, threadStats());
        }
        System.out.printf(Locale.ROOT, "Warm-up: %d rounds of %d misses and %d hits; the JIT's threads took %.0f %% of "
            + "the last round's CPU%n%n", rounds, warmUp, warmUp, compiling * 100);
        Cost miss = run(policy, concurrency, calls, "miss", redis, port, "miss");  // new keys: claim + complete
        Cost hit = run(policy, concurrency, calls, "miss", redis, port, "hit");    // the same keys: claim answers Done
        // The ceiling: what the same Redisson client, settings and concurrency allow without Breakwater, each warmed
        // up by one unmeasured run. A GET of one existing key, adapted as the store adapts its calls ...
        RBucket<String> bucket = client.getBucket("bench:get", StringCodec.INSTANCE);
        bucket.set("v");
        IntFunction<Mono<?>> get = i -> Mono.fromCompletionStage(bucket::getAsync);
        measure(concurrency, warmUp, get, redis, port, null);
        Cost bareGet = measure(concurrency, calls, get, redis, port, "get");
        // ... and what a hit sends: EVALSHA of the store's claim script on each completed record of the hit run, its
        // arguments made before the run
        IntFunction<Mono<?>> claimDone = claimsOfDoneRecords(client, policy, calls, "miss");
        measure(concurrency, warmUp, claimDone, redis, port, null);
        Cost bareClaim = measure(concurrency, calls, claimDone, redis, port, "evalsha");
        System.out.printf(Locale.ROOT, "| measure (concurrency %d, %d calls%s) | ops/s | ratio to SET |%n",
            concurrency, calls, pinned ? ", clients on CPU 0, redis-server on CPU 1" : ", not pinned");
        System.out.println("|---|---|---|");
        System.out.printf(Locale.ROOT, "| redis-benchmark SET | %.0f | 1.00 |%n", setOps);
        System.out.printf(Locale.ROOT, "| idempotentBy hit (1 round trip) | %.0f | %.2f |%n", hit.opsPerSecond(),
            hit.opsPerSecond() / setOps);
        System.out.printf(Locale.ROOT, "| idempotentBy miss (2 round trips) | %.0f | %.2f |%n", miss.opsPerSecond(),
            miss.opsPerSecond() / setOps);
        System.out.printf(Locale.ROOT, "| Redisson GET alone (1 round trip) | %.0f | %.2f |%n", bareGet.opsPerSecond(),
            bareGet.opsPerSecond() / setOps);
        System.out.printf(Locale.ROOT, "| Redisson EVALSHA of the claim script, done record, alone (1 round trip) | %.0f "
            + "| %.2f |%n", bareClaim.opsPerSecond(), bareClaim.opsPerSecond() / setOps);
        System.out.println();
        System.out.println("| per operation (load-independent) | client CPU µs (of it system) | redis-server CPU µs | context "
            + "switches (voluntary / involuntary) | client allocation B | Redis commands |");
        System.out.println("|---|---|---|---|---|---|");
        System.out.println(setCost.row("redis-benchmark SET"));
        System.out.println(hit.row("idempotentBy hit"));
        System.out.println(miss.row("idempotentBy miss"));
        System.out.println(bareGet.row("Redisson GET alone"));
        System.out.println(bareClaim.row("Redisson EVALSHA of the claim script, done record, alone"));
        System.out.println();
        System.out.println("Client CPU µs per operation by thread (user + system): hit: " + hit.cpuByThread()
            + "; miss: " + miss.cpuByThread() + "; Redisson GET alone: " + bareGet.cpuByThread()
            + "; Redisson EVALSHA alone: " + bareClaim.cpuByThread());
      } finally {
        client.shutdown();
      }
    } finally {
      redis.destroyForcibly();
      redis.waitFor(5, TimeUnit.SECONDS);
    }
  }

  /** Runs {@code calls} idempotent calls on keys {@code prefix-i}; see {@link #measure}. */
  private static Cost run(IdempotencyPolicy policy, int concurrency, int calls, String prefix, Process redis, int port,
      @Nullable String profile) throws IOException, InterruptedException, ParseException {
    return measure(concurrency, calls, i -> Mono.just(i).transformDeferred(idempotentBy(
        IdempotencyKey.explicit("bench", prefix + "-" + i, i), policy, Integer.class)), redis, port, profile);
  }

  /**
   * Runs {@code operation(i)} for i below {@code calls}, {@code concurrency} at a time, measuring this JVM's CPU time,
   * context switches and allocation, and the server's CPU time and commands, over the run; with
   * {@code -Dbreakwater.redis.jfr=<dir>}, a named run ({@code profile} not null) is also recorded by JFR (the JDK's
   * "profile" settings) to {@code <dir>/<profile>.jfr}.
   */
  private static Cost measure(int concurrency, int calls, IntFunction<? extends Mono<?>> operation, Process redis,
      int port, @Nullable String profile) throws IOException, InterruptedException, ParseException {
    String jfrDir = System.getProperty("breakwater.redis.jfr");
    Recording recording = null;
    if (profile != null && jfrDir != null) {
      recording = new Recording(Configuration.getConfiguration("profile"));
      recording.setDestination(Path.of(jfrDir, profile + ".jfr"));
      recording.start();
    }
    ServerCost server = ServerCost.start(redis, port);
    long cpu = OS.getProcessCpuTime();
    Map<String, long[]> threads = threadStats();
    long allocated = THREADS.getTotalThreadAllocatedBytes();
    long start = System.nanoTime();
    Flux.range(0, calls).flatMap(operation::apply, concurrency).blockLast(Duration.ofMinutes(5));
    double ops = calls / ((System.nanoTime() - start) / 1e9);
    long cpuAfter = OS.getProcessCpuTime();
    long allocatedAfter = THREADS.getTotalThreadAllocatedBytes();
    Map<String, long[]> threadsAfter = threadStats();
    long[] was = total(threads);
    long[] is = total(threadsAfter);
    Cost cost = new Cost(ops, calls, cpuAfter - cpu, (is[1] - was[1]) * (1_000_000_000L / TICKS_PER_SECOND),
        is[2] - was[2], is[3] - was[3], allocatedAfter - allocated, server.end(calls),
        cpuByThread(threads, threadsAfter, calls));
    if (recording != null) {
      recording.stop();
      recording.close();
    }
    return cost;
  }

  /**
   * EVALSHA of the store's claim script, through Redisson's asynchronous API, for the records of the keys
   * {@code prefix-i} (completed by a run before): the same key, keyed fingerprint, owner token and lease as a hit of
   * {@code idempotentBy} sends, made here before the run, so the run costs Redisson's work alone.
   */
  private static IntFunction<Mono<?>> claimsOfDoneRecords(RedissonClient client, IdempotencyPolicy policy, int calls,
      String prefix) {
    RScript scripts = client.getScript(StringCodec.INSTANCE);
    scripts.scriptLoad(IdempotencyScripts.CLAIM.text());
    String[] keys = new String[calls];
    String[] fingerprints = new String[calls];
    for (int i = 0; i < calls; i++) {
      IdempotencyKey key = IdempotencyKey.explicit("bench", prefix + "-" + i, i);
      keys[i] = "bw:idem:{" + policy.storeKey(key) + "}";      // the store's default prefix
      fingerprints[i] = policy.storeFingerprint(key);
    }
    String owner = "0123456789abcdef0123456789abcdef";
    String lease = Long.toString(policy.lease().toMillis());
    String sha = IdempotencyScripts.CLAIM.sha();
    return i -> {
      int record = i % calls;     // a warm-up run may be longer than the measured ones
      return Mono.fromCompletionStage(() -> scripts.evalShaAsync(keys[record], RScript.Mode.READ_WRITE, sha,
          RScript.ReturnType.LIST, List.of(keys[record]), fingerprints[record], owner, lease));
    };
  }

  private static final OperatingSystemMXBean OS =
      (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
  private static final ThreadMXBean THREADS = (ThreadMXBean) ManagementFactory.getThreadMXBean();

  /**
   * Per thread of this JVM (from /proc/self/task; empty elsewhere), by name with its digits removed: user and system
   * CPU ticks and voluntary and involuntary context switches, as {@code [user, system, voluntary, involuntary]}.
   */
  private static Map<String, long[]> threadStats() throws IOException {
    Map<String, long[]> byName = new TreeMap<>();
    Path tasks = Path.of("/proc/self/task");
    if (!Files.isDirectory(tasks)) {
      return byName;
    }
    try (Stream<Path> threads = Files.list(tasks)) {
      for (Path thread : (Iterable<Path>) threads::iterator) {
        String stat;
        List<String> status;
        try {
          stat = Files.readString(thread.resolve("stat"));
          status = Files.readAllLines(thread.resolve("status"));
        } catch (IOException e) {
          continue;     // the thread ended meanwhile
        }
        String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replaceAll("[0-9]+", "#");
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long[] sum = byName.computeIfAbsent(name, n -> new long[4]);
        sum[0] += Long.parseLong(fields[11]);     // utime: field 14 of stat, the 12th after the name
        sum[1] += Long.parseLong(fields[12]);     // stime
        for (String line : status) {
          if (line.startsWith("voluntary_ctxt_switches:")) {
            sum[2] += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
          } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
            sum[3] += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
          }
        }
      }
    }
    return byName;
  }

  private static long[] total(Map<String, long[]> stats) {
    long[] total = new long[4];
    for (long[] thread : stats.values()) {
      for (int i = 0; i < total.length; i++) {
        total[i] += thread[i];
      }
    }
    return total;
  }

  /** The threads that spent at least 2 % of the run's CPU ticks: {@code name user+system µs/op (system µs)}. */
  private static String cpuByThread(Map<String, long[]> before, Map<String, long[]> after, int calls) {
    long all = total(after)[0] + total(after)[1] - total(before)[0] - total(before)[1];
    double microsPerTick = 1e6 / TICKS_PER_SECOND;
    StringBuilder line = new StringBuilder();
    after.entrySet().stream()
        .map(e -> {
          long[] was = before.getOrDefault(e.getKey(), new long[4]);
          return Map.entry(e.getKey(), new long[] {e.getValue()[0] - was[0], e.getValue()[1] - was[1]});
        })
        .filter(e -> all > 0 && (e.getValue()[0] + e.getValue()[1]) * 50 >= all)
        .sorted((a, b) -> Long.compare(b.getValue()[0] + b.getValue()[1], a.getValue()[0] + a.getValue()[1]))
        .forEach(e -> line.append(line.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%s %.1f (sys %.1f)",
            e.getKey(), (e.getValue()[0] + e.getValue()[1]) * microsPerTick / calls,
            e.getValue()[1] * microsPerTick / calls)));
    return line.toString();
  }

  private static final int MAX_WARM_UP_ROUNDS = 8;

  /** The share of this JVM's CPU ticks between two {@link #threadStats()} that its JIT compiler threads took. */
  private static double compilerShare(Map<String, long[]> before, Map<String, long[]> after) {
    long all = total(after)[0] + total(after)[1] - total(before)[0] - total(before)[1];
    long compiler = 0;
    for (Map.Entry<String, long[]> thread : after.entrySet()) {
      if (thread.getKey().contains("CompilerThre")) {
        long[] was = before.getOrDefault(thread.getKey(), new long[4]);
        compiler += thread.getValue()[0] + thread.getValue()[1] - was[0] - was[1];
      }
    }
    return all <= 0 ? 0 : (double) compiler / all;
  }

  /** USER_HZ, the unit of /proc's CPU times: 100 on every Linux this runs on. */
  private static final int TICKS_PER_SECOND = 100;

  /** What one measured run cost; negative figures were not measured. */
  private record Cost(double opsPerSecond, int calls, long clientCpuNanos, long clientSystemNanos,
      long voluntarySwitches, long involuntarySwitches, long allocatedBytes, ServerCost.Spent server,
      String cpuByThread) {

    String row(String measure) {
      return String.format(Locale.ROOT, "| %s | %.1f (sys %.1f) | %.1f | %s | %s | %s |", measure,
          clientCpuNanos / 1e3 / calls, clientSystemNanos / 1e3 / calls, server.cpuNanos() / 1e3 / calls,
          voluntarySwitches < 0 ? "–" : String.format(Locale.ROOT, "%.2f / %.2f", (double) voluntarySwitches / calls,
              (double) involuntarySwitches / calls),
          allocatedBytes < 0 ? "–" : String.format(Locale.ROOT, "%.0f", (double) allocatedBytes / calls),
          server.commandsPerCall());
    }
  }

  /** The server's CPU time (from its process) and the commands it ran ({@code INFO commandstats}) over a run. */
  private record ServerCost(Process redis, int port, long cpuNanos, Map<String, Long> commands) {

    record Spent(long cpuNanos, String commandsPerCall) {}

    static ServerCost start(Process redis, int port) throws IOException, InterruptedException {
      return new ServerCost(redis, port, cpuNanos(redis), commandStats(port));
    }

    Spent end(int calls) throws IOException, InterruptedException {
      long cpu = cpuNanos(redis) - cpuNanos;
      Map<String, Long> after = commandStats(port);
      StringBuilder perCall = new StringBuilder();
      for (Map.Entry<String, Long> command : new TreeMap<>(after).entrySet()) {
        long ran = command.getValue() - commands.getOrDefault(command.getKey(), 0L);
        if (!command.getKey().equals("info") && ran * 100L >= calls) {     // 0.01 a call or more
          perCall.append(perCall.length() == 0 ? "" : ", ").append(command.getKey().toUpperCase(Locale.ROOT))
              .append(String.format(Locale.ROOT, " %.2f", (double) ran / calls));
        }
      }
      return new Spent(cpu, perCall.toString());
    }

    private static long cpuNanos(Process redis) {
      return redis.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
    }

    /** Calls per command so far, e.g. {@code evalsha=1200}; the commands a Lua script runs are counted too, beside its EVALSHA. */
    private static Map<String, Long> commandStats(int port) throws IOException, InterruptedException {
      Process cli = new ProcessBuilder("redis-cli", "-h", "127.0.0.1", "-p", Integer.toString(port), "INFO",
          "commandstats").redirectErrorStream(true).start();
      String output = new String(cli.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      cli.waitFor();
      Map<String, Long> calls = new HashMap<>();
      Matcher m = Pattern.compile("cmdstat_([a-z|_-]+):calls=([0-9]+)").matcher(output);
      while (m.find()) {
        calls.put(m.group(1), Long.parseLong(m.group(2)));
      }
      return calls;
    }
  }

  /** User and system CPU time of the shell's children, from the second line of bash's {@code times} ("0m1.5s 0m0.2s"). */
  private static long[] redisBenchmarkCpuNanos(Path cpuTimes) throws IOException, ParseException {
    List<String> lines = Files.readAllLines(cpuTimes);
    long[] nanos = new long[2];
    Matcher m = Pattern.compile("([0-9]+)m([0-9.]+)s").matcher(lines.get(1));
    for (int i = 0; i < 2; i++) {
      if (!m.find()) {
        throw new ParseException("no CPU times in: " + lines, 0);
      }
      nanos[i] = Long.parseLong(m.group(1)) * 60_000_000_000L + (long) (Double.parseDouble(m.group(2)) * 1e9);
    }
    return nanos;
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

  /**
   * Runs {@code redis-benchmark} under a shell whose {@code times} writes the CPU time of its child to
   * {@code cpuTimes}.
   */
  private static double redisBenchmark(int port, int concurrency, int calls, boolean pinned, Path cpuTimes)
      throws IOException, InterruptedException {
    String command = "redis-benchmark -h 127.0.0.1 -p " + port + " -t set -c " + concurrency + " -n " + calls
        + " -q; times > '" + cpuTimes + "'";
    Process bench = new ProcessBuilder(pinned(pinned, "0", "bash", "-c", command))
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
