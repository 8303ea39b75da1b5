package io.breakwater.benchmarks.breaker;

import static io.breakwater.Breakwater.guardedBy;

import io.breakwater.benchmarks.CountingSubscriber;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import reactor.core.publisher.Mono;

/**
 * A supplement to {@link GuardedByBenchmark} for a shared, noisy machine: the variants run in interleaved chunks of
 * 200 000 subscriptions, round after round, and each keeps its fastest chunk, so that load from other processes hits
 * every variant alike instead of whichever JMH happened to be measuring. Not a replacement for JMH (no blackhole, no
 * forks): a cross-check of its ratios.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.breakwater.benchmarks.breaker.GuardedByInterleaved 1   # threads
 * </pre>
 */
public final class GuardedByInterleaved {

  private static final int CHUNK = 200_000;
  private static final int ROUNDS = 200;
  private static final int WARM_UP_ROUNDS = 40;

  private GuardedByInterleaved() {}

  public static void main(String[] args) throws Exception {
    int threads = args.length > 0 ? Integer.parseInt(args[0]) : 1;
    Mono<Integer> bare = Mono.fromSupplier(() -> 42);
    Map<String, Mono<Integer>> variants = new LinkedHashMap<>();
    variants.put("baseline", bare);
    variants.put("breakwater", bare.transform(guardedBy(CircuitBreaker.ofDefaults("bench"))));
    variants.put("breakwaterNoSlowCalls",
        bare.transform(guardedBy(CircuitBreaker.builder("bench-fast").noSlowCallTrigger().build())));
    variants.put("breakwaterToolAndFamily", bare.transform(guardedBy(CircuitBreakerRegistry.ofDefaults(),
        "gmail.send")));
    variants.put("resilience4j", bare.transform(CircuitBreakerOperator.of(
        io.github.resilience4j.circuitbreaker.CircuitBreaker.ofDefaults("bench"))));

    Map<String, Double> fastest = new LinkedHashMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < ROUNDS; round++) {
        for (Map.Entry<String, Mono<Integer>> variant : variants.entrySet()) {
          double nanosPerCall = chunk(pool, threads, variant.getValue());
          if (round >= WARM_UP_ROUNDS) {
            fastest.merge(variant.getKey(), nanosPerCall, Math::min);
          }
        }
      }
    } finally {
      pool.shutdown();
    }
    double baseline = fastest.get("baseline");
    double peer = fastest.get("resilience4j") - baseline;
    System.out.printf("%d thread(s), fastest of %d chunks of %d calls%n", threads, ROUNDS - WARM_UP_ROUNDS, CHUNK);
    fastest.forEach((name, ns) -> System.out.printf("%-24s %6.1f ns/op  overhead %6.1f  ratio to resilience4j %.2f%n",
        name, ns, ns - baseline, (ns - baseline) / peer));
  }

  /** Runs a chunk on every thread at once; the slowest thread's time per call. */
  private static double chunk(ExecutorService pool, int threads, Mono<Integer> call) throws Exception {
    List<Future<Long>> runs = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      runs.add(pool.submit(() -> {
        CountingSubscriber subscriber = new CountingSubscriber();
        long start = System.nanoTime();
        for (int i = 0; i < CHUNK; i++) {
          call.subscribe(subscriber);
        }
        return System.nanoTime() - start;
      }));
    }
    long slowest = 0;
    for (Future<Long> run : runs) {
      slowest = Math.max(slowest, run.get());
    }
    return slowest / (double) CHUNK;
  }
}
