package io.breakwater.benchmarks;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.throttledBy;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.internal.Lift;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.reactor.bulkhead.operator.BulkheadOperator;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import io.github.resilience4j.reactor.ratelimiter.operator.RateLimiterOperator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoOperator;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * A cross-check of {@code GuardedByAsyncBenchmark} and {@code LimitBenchmark} for a shared, noisy machine: the
 * variants of one row run in interleaved chunks of asynchronous calls ({@link AsyncCalls}), round after round, and
 * each keeps its fastest chunk, so that load from other processes hits every variant alike and a chunk that was
 * descheduled does not count. Not a replacement for JMH (no blackhole, no forks): a way to see the ratios move while
 * others build. On two threads every thread runs its own calls through the same operator; a chunk's time is its
 * slowest thread's. Each round also times a chunk of clock reads on the operators' default clock, so that the cost
 * of the reads a design needs per call can be set against the peer's whole overhead in the same run.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.breakwater.benchmarks.AsyncInterleaved breaker 10000 1
 * java -cp benchmarks/target/benchmarks.jar io.breakwater.benchmarks.AsyncInterleaved breaker 10000 2
 * java -cp benchmarks/target/benchmarks.jar io.breakwater.benchmarks.AsyncInterleaved limit 1000 1
 * java -cp benchmarks/target/benchmarks.jar io.breakwater.benchmarks.AsyncInterleaved shell 1000 1
 * java -cp benchmarks/target/benchmarks.jar io.breakwater.benchmarks.AsyncInterleaved deadline 10000 1
 * java -cp benchmarks/target/benchmarks.jar io.breakwater.benchmarks.AsyncInterleaved pipeline 10000 1
 * java -cp benchmarks/target/benchmarks.jar io.breakwater.benchmarks.AsyncInterleaved hedge 1000 1
 * </pre>
 *
 * <p>{@code -Donly=REGEX} keeps the baseline and the variants whose names match, so that a variant can run in a JVM of
 * its own (as JMH's forks do), its call sites' profiles not shared with the others'.
 */
public final class AsyncInterleaved {

  private static final int CHUNK = 20_000;
  private static final int ROUNDS = 300;
  private static final int WARM_UP_ROUNDS = 60;
  private static final String CLOCK_READ = "clock read";

  // written, never read: it keeps the JIT from dropping the clock reads
  @SuppressWarnings("UnusedVariable")
  private static long readSink;

  private AsyncInterleaved() {}

  public static void main(String[] args) throws Exception {
    String row = args.length > 0 ? args[0] : "breaker";
    int inFlight = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
    int threads = args.length > 2 ? Integer.parseInt(args[2]) : 1;
    Map<String, Function<Mono<Integer>, Mono<Integer>>> variants = row.equals("limit") ? limits()
        : row.equals("shell") ? shells() : row.equals("deadline") ? TimerRows.deadlines()
        : row.equals("pipeline") ? TimerRows.pipelines() : row.equals("hedge") ? TimerRows.hedges() : breakers();
    String peer = row.equals("breaker") || row.equals("pipeline") ? "resilience4j"
        : row.equals("deadline") ? "resilience4jTimeLimiter" : row.equals("hedge") ? "withDeadline" : null;
    String only = System.getProperty("only");
    if (only != null) {
      variants.keySet().removeIf(name -> !name.equals("baseline") && !name.matches(only));
    }

    List<Map<String, AsyncCalls>> perThread = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Map<String, AsyncCalls> calls = new LinkedHashMap<>();
      variants.forEach((name, operator) -> {
        AsyncCalls c = new AsyncCalls(inFlight);
        c.start(operator.apply(c.source()), new CountingSubscriber());
        calls.put(name, c);
      });
      perThread.add(calls);
    }
    Map<String, Double> fastest = new LinkedHashMap<>();
    Scheduler clock = Schedulers.parallel();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < ROUNDS; round++) {
        for (String name : variants.keySet()) {
          double nanosPerCall = chunk(pool, perThread, name);
          if (round >= WARM_UP_ROUNDS) {
            fastest.merge(name, nanosPerCall, Math::min);
          }
        }
        double nanosPerRead = clockReads(clock);
        if (round >= WARM_UP_ROUNDS) {
          fastest.merge(CLOCK_READ, nanosPerRead, Math::min);
        }
      }
    } finally {
      pool.shutdown();
    }
    double baseline = fastest.get("baseline");
    System.out.printf("%s, %d in flight, %d thread(s), fastest of %d chunks of %d calls%n", row, inFlight, threads,
        ROUNDS - WARM_UP_ROUNDS, CHUNK);
    double read = fastest.remove(CLOCK_READ);
    fastest.forEach((name, ns) -> {
      String against = peer != null ? peer : name.startsWith("breakwaterLimited") ? "resilience4jBulkhead"
          : "resilience4jRateLimiter";
      Double peerNs = fastest.get(against);
      System.out.printf("%-28s %7.1f ns/call  overhead %6.1f  ratio to %s %.2f%n", name, ns, ns - baseline, against,
          peerNs == null ? Double.NaN : (ns - baseline) / (peerNs - baseline));
    });
    System.out.printf("one clock read (Schedulers.parallel().now(NANOSECONDS)): %.1f ns", read);
    if (peer != null && fastest.containsKey(peer)) {
      System.out.printf("; two reads / %s's overhead: %.2f%n", peer, 2 * read / (fastest.get(peer) - baseline));
    } else if (fastest.containsKey("resilience4jRateLimiter")) {
      System.out.printf("; one read / resilience4jRateLimiter's overhead: %.2f%n",
          read / (fastest.get("resilience4jRateLimiter") - baseline));
    } else {
      System.out.println();
    }
  }

  /** A chunk of clock reads on this thread: the time of one. */
  private static double clockReads(Scheduler clock) {
    long sum = 0;
    long start = System.nanoTime();
    for (int i = 0; i < CHUNK; i++) {
      sum += clock.now(TimeUnit.NANOSECONDS);
    }
    long elapsed = System.nanoTime() - start;
    readSink = sum;
    return elapsed / (double) CHUNK;
  }

  private static Map<String, Function<Mono<Integer>, Mono<Integer>>> breakers() {
    CircuitBreaker breaker = CircuitBreaker.ofDefaults("bench");
    CircuitBreaker noSlow = CircuitBreaker.builder("bench-fast").noSlowCallTrigger().build();
    CircuitBreakerOperator<Integer> r4j = CircuitBreakerOperator.of(
        io.github.resilience4j.circuitbreaker.CircuitBreaker.ofDefaults("bench"));
    Map<String, Function<Mono<Integer>, Mono<Integer>>> variants = new LinkedHashMap<>();
    variants.put("baseline", m -> m);
    variants.put("breakwater", m -> m.transform(guardedBy(breaker)));
    variants.put("breakwaterNoSlowCalls", m -> m.transform(guardedBy(noSlow)));
    variants.put("resilience4j", m -> m.transform(r4j));
    return variants;
  }

  private static Map<String, Function<Mono<Integer>, Mono<Integer>>> limits() {
    Function<Publisher<Integer>, Publisher<Integer>> limited =
        limitedBy(ConcurrencyLimit.fixed(1_000_000));
    Function<Publisher<Integer>, Publisher<Integer>> throttled =
        throttledBy(RateLimit.builder("bench").requests(Long.MAX_VALUE / 4, Duration.ofSeconds(1)).build());
    BulkheadOperator<Integer> bulkhead = BulkheadOperator.of(Bulkhead.of("bench", BulkheadConfig.custom()
        .maxConcurrentCalls(1_000_000).maxWaitDuration(Duration.ZERO).build()));
    RateLimiterOperator<Integer> rateLimiter = RateLimiterOperator.of(RateLimiter.of("bench",
        RateLimiterConfig.custom().limitForPeriod(Integer.MAX_VALUE / 2)
            .limitRefreshPeriod(Duration.ofSeconds(1)).timeoutDuration(Duration.ZERO).build()));
    Map<String, Function<Mono<Integer>, Mono<Integer>>> variants = new LinkedHashMap<>();
    variants.put("baseline", m -> m);
    variants.put("breakwaterLimitedBy", m -> Mono.from(limited.apply(m)));
    variants.put("resilience4jBulkhead", m -> m.transform(bulkhead));
    variants.put("breakwaterThrottledBy", m -> Mono.from(throttled.apply(m)));
    variants.put("resilience4jRateLimiter", m -> m.transform(rateLimiter));
    return variants;
  }

  /**
   * What every hand-written operator pays before it does anything: {@link Lift}'s wrapper and a subscriber that only
   * relays the signals, against the same relay behind a plain {@code MonoOperator}.
   */
  private static Map<String, Function<Mono<Integer>, Mono<Integer>>> shells() {
    Lift.OnSubscribe<Integer> relay = (source, actual, mono) -> source.subscribe(new Relay(actual));
    Map<String, Function<Mono<Integer>, Mono<Integer>>> variants = new LinkedHashMap<>();
    variants.put("baseline", m -> m);
    variants.put("liftRelay", m -> Mono.from(Lift.apply(m, "relay", relay)));
    variants.put("monoOperatorRelay", m -> new MonoOperator<Integer, Integer>(m) {
      @Override
      public void subscribe(CoreSubscriber<? super Integer> actual) {
        source.subscribe(new Relay(actual));
      }
    });
    return variants;
  }

  /** A subscriber that relays every signal and request, as an operator's subscriber does before its own work. */
  private static final class Relay implements CoreSubscriber<Integer>, Subscription {
    private final CoreSubscriber<? super Integer> actual;
    @SuppressWarnings("NullAway.Init")
    private Subscription s;

    Relay(CoreSubscriber<? super Integer> actual) {
      this.actual = actual;
    }

    @Override
    public Context currentContext() {
      return actual.currentContext();
    }

    @Override
    public void onSubscribe(Subscription s) {
      this.s = s;
      actual.onSubscribe(this);
    }

    @Override
    public void onNext(Integer value) {
      actual.onNext(value);
    }

    @Override
    public void onError(Throwable t) {
      actual.onError(t);
    }

    @Override
    public void onComplete() {
      actual.onComplete();
    }

    @Override
    public void request(long n) {
      s.request(n);
    }

    @Override
    public void cancel() {
      s.cancel();
    }
  }

  /** Runs a chunk of {@code name} on every thread at once; the slowest thread's time per call. */
  private static double chunk(ExecutorService pool, List<Map<String, AsyncCalls>> perThread, String name)
      throws Exception {
    List<Future<Long>> runs = new ArrayList<>();
    for (Map<String, AsyncCalls> calls : perThread) {
      AsyncCalls c = calls.get(name);
      runs.add(pool.submit(() -> {
        long start = System.nanoTime();
        for (int i = 0; i < CHUNK; i++) {
          c.next();
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
