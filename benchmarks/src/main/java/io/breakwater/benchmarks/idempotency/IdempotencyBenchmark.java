package io.breakwater.benchmarks.idempotency;

import static io.breakwater.Breakwater.idempotentBy;

import io.breakwater.benchmarks.BlackholeSubscriber;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;
import reactor.core.publisher.Mono;

/**
 * {@code idempotentBy} with the in-memory store: the hit path (the outcome is stored; the call is not made), the miss
 * path (a new key each time: claim, call, store), and deriving a key from arguments — against a bare call in the same
 * run.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class IdempotencyBenchmark {

  private static final Map<String, Object> ARGS = Map.of("from", "LHR", "to", "JFK", "passengers", 2,
      "date", "2026-12-24");

  private final Mono<Integer> call = Mono.fromSupplier(() -> 42);
  private IdempotencyPolicy policy;
  private Function<Mono<Integer>, Mono<Integer>> hit;
  private BlackholeSubscriber<Integer> subscriber;
  private long next;

  @Setup
  public void setUp(Blackhole blackhole) {
    policy = IdempotencyPolicy.of(IdempotencyStore.inMemory(256L << 20, reactor.core.scheduler.Schedulers::parallel));
    hit = idempotentBy(IdempotencyKey.of("flights.search", ARGS), policy, Integer.class);
    call.transformDeferred(hit).block();
    subscriber = new BlackholeSubscriber<>(blackhole);
  }

  @Benchmark
  public void baseline() {
    call.subscribe(subscriber);
  }

  @Benchmark
  public void hit() {
    call.transformDeferred(hit).subscribe(subscriber);
  }

  @Benchmark
  public void miss() {
    IdempotencyKey key = IdempotencyKey.explicit("flights.book", Long.toString(next++), 42);
    call.transformDeferred(idempotentBy(key, policy, Integer.class)).subscribe(subscriber);
  }

  @Benchmark
  public IdempotencyKey deriveKey() {
    return IdempotencyKey.of("flights.search", ARGS);
  }
}
