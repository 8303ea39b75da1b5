package io.breakwater.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.redis.testing.RedisProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One run of the multi-process harness: its {@code redis-server}s, its {@link FaultWorker} processes and their ledger
 * ({@link FaultsAcrossProcessesIT}, {@link WorkerFrozenPastItsDeadlineIT}).
 */
final class FaultRun implements AutoCloseable {

  /**
   * What the ledger says: the workers that ran each key, and the keys a worker met as of unknown outcome (it did not
   * run them: their write may have happened, so it is not sent again).
   */
  record Ledger(Map<Integer, List<String>> runs, Set<Integer> unknown) {

    /** Keys that ran, or that were left as of unknown outcome: each worker is done with them. */
    Set<Integer> resolved() {
      Set<Integer> resolved = new HashSet<>(runs.keySet());
      resolved.addAll(unknown);
      return resolved;
    }

    /** Keys run by more than one call, with the workers that ran them. */
    Map<Integer, List<String>> runTwice() {
      Map<Integer, List<String>> twice = new HashMap<>();
      runs.forEach((k, by) -> {
        if (by.size() > 1) {
          twice.put(k, by);
        }
      });
      return twice;
    }

    /** Keys of unknown outcome that no ledger line shows run: cancelled before their write, or lost with it. */
    long unknownNeverRun() {
      return unknown.stream().filter(k -> !runs.containsKey(k)).count();
    }
  }

  final Path dir;
  final Path ledger;
  final int keys;
  final List<RedisProcess> servers = new ArrayList<>();
  final List<Process> workers = new ArrayList<>();
  Process sentinel;

  FaultRun(int keys) throws IOException {
    this.keys = keys;
    dir = Files.createTempDirectory("breakwater-faults");
    ledger = dir.resolve("ledger.txt");
  }

  /** A server with AOF {@code appendfsync always}. */
  static RedisProcess aofServer(String... more) {
    List<String> args = new ArrayList<>(List.of("--appendonly", "yes", "--appendfsync", "always"));
    args.addAll(List.of(more));
    return RedisProcess.start(args.toArray(String[]::new));
  }

  void startWorkers(int count, String redis, long leaseMillis, boolean checkOwner, int replicas) throws IOException {
    startWorkers(count, redis, leaseMillis, checkOwner, replicas, 0, 8);
  }

  /**
   * Workers with {@code inFlight} calls at a time, whose side effect's answer is fetched (a round trip to Redis)
   * {@code answerMillis} after its ledger line is written ({@link FaultWorker}).
   */
  void startWorkers(int count, String redis, long leaseMillis, boolean checkOwner, int replicas, long answerMillis,
      int inFlight) throws IOException {
    for (int w = 0; w < count; w++) {
      workers.add(new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-Xmx256m", "-cp", System.getProperty("java.class.path"), FaultWorker.class.getName(), redis, "w" + w,
          Integer.toString(keys), ledger.toString(), Long.toString(leaseMillis), Boolean.toString(checkOwner),
          Integer.toString(replicas), Long.toString(answerMillis), Integer.toString(inFlight))
          .redirectErrorStream(true).redirectOutput(dir.resolve("worker-" + w + ".log").toFile()).start());
    }
  }

  /** The ledger's lines (a line cut by a worker's kill -9 is ignored). */
  Ledger ledger() throws IOException {
    Map<Integer, List<String>> runs = new HashMap<>();
    Set<Integer> unknown = new HashSet<>();
    if (!Files.exists(ledger)) {
      return new Ledger(runs, unknown);
    }
    for (String line : Files.readAllLines(ledger, StandardCharsets.US_ASCII)) {
      String[] parts = line.trim().split(" ");
      if (parts.length == 2 && parts[1].startsWith("w")) {
        runs.computeIfAbsent(Integer.parseInt(parts[0]), k -> new ArrayList<>()).add(parts[1]);
      } else if (parts.length == 3 && parts[1].startsWith("w") && parts[2].equals(FaultWorker.UNKNOWN)) {
        unknown.add(Integer.parseInt(parts[0]));
      }
    }
    return new Ledger(runs, unknown);
  }

  /** Waits until {@code share} of the keys have run (at most 2 minutes). */
  void awaitShare(double share) throws IOException, InterruptedException {
    long until = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (ledger().runs().size() < keys * share && System.nanoTime() < until) {
      Thread.sleep(5);
    }
  }

  void awaitWorkers(long timeout, TimeUnit unit) throws InterruptedException {
    for (Process worker : workers) {
      if (!worker.waitFor(timeout, unit)) {
        worker.destroyForcibly();
      }
    }
  }

  void signal(Process process, String signal) throws IOException, InterruptedException {
    new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start().waitFor();
  }

  /** {@code SIGSTOP}s the worker for {@code millis}, then {@code SIGCONT}s it. */
  void freeze(Process worker, long millis) {
    try {
      signal(worker, "STOP");
      Thread.sleep(millis);
      signal(worker, "CONT");
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Prints {@code | fault | run | keys resolved | keys of unknown outcome (never run) | keys run twice |}, asserts
   * that every key was resolved, and returns the keys run twice.
   */
  Map<Integer, List<String>> report(String fault, int run) throws IOException {
    Ledger ledger = ledger();
    Map<Integer, List<String>> twice = ledger.runTwice();
    System.out.printf(Locale.ROOT, "| %s | %d | %d of %d | %d (%d never run) | %d |%n", fault, run,
        ledger.resolved().size(), keys, ledger.unknown().size(), ledger.unknownNeverRun(), twice.size());
    assertThat(ledger.resolved()).as("keys resolved (%s, run %d): see %s", fault, run, dir).hasSize(keys);
    return twice;
  }

  @Override
  public void close() {
    workers.forEach(Process::destroyForcibly);
    if (sentinel != null) {
      sentinel.destroyForcibly();
    }
    servers.forEach(RedisProcess::close);
  }
}
