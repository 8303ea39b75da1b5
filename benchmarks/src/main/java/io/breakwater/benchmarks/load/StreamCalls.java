package io.breakwater.benchmarks.load;

import io.breakwater.failure.HttpStatusException;
import io.breakwater.stream.FirstItemTimeoutException;
import io.breakwater.stream.IdleTimeoutException;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.LlmStreamClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * LLM streams against the {@link LoadServer}, through the public {@link LlmStreamClient} only (its element type is
 * not read, so the harness does not depend on it): each stream's time to first chunk, chunks, and how it ended.
 */
final class StreamCalls {

  private static final Map<String, Object> REQUEST = Map.of("model", "load",
      "messages", List.of(Map.of("role", "user", "content", "count")));

  private final String baseUrl;
  private final Supplier<Scheduler> scheduler;
  private final List<ConnectionProvider> pools = new ArrayList<>();

  StreamCalls(String baseUrl, Supplier<Scheduler> scheduler) {
    this.baseUrl = baseUrl;
    this.scheduler = scheduler;
  }

  /** How one stream went: nanos to its first chunk (-1 if none), chunks, nanos to its end, its error kind if any. */
  record Outcome(long firstNanos, long chunks, long endNanos, String error) {
    long firstSignalNanos() {
      return firstNanos >= 0 ? firstNanos : endNanos;
    }
  }

  /** A client as a newcomer builds it (default pool and timeouts), scripted by {@code script}. */
  LlmStreamClient defaultClient(String script) {
    return LlmStreamClient.builder(baseUrl, Dialect.OPENAI_CHAT).header("X-Load", script)
        .scheduler(scheduler).build();
  }

  /** A client with the given timeouts, and its own pool of {@code connections} when that is positive. */
  LlmStreamClient client(String script, StreamTimeouts timeouts, int connections) {
    LlmStreamClient.Builder builder = LlmStreamClient.builder(baseUrl, Dialect.OPENAI_CHAT).header("X-Load", script)
        .scheduler(scheduler);
    if (timeouts != null) {
      builder.timeouts(timeouts);
    }
    if (connections > 0) {
      ConnectionProvider pool = ConnectionProvider.builder("load-tuned-" + connections)
          .maxConnections(connections).pendingAcquireMaxCount(-1).build();
      synchronized (pools) {
        pools.add(pool);
      }
      builder.httpClient(HttpClient.create(pool));
    }
    return builder.build();
  }

  /** Closes the pools of the clients built so far, so that one scenario's idle connections do not pile up. */
  void closePools() {
    synchronized (pools) {
      pools.forEach(ConnectionProvider::dispose);
      pools.clear();
    }
  }

  /** The client's timeouts without a deadline (12 s to the first chunk, 3 s idle), on the counted scheduler. */
  StreamTimeouts defaultTimeouts() {
    return timeouts(Duration.ofSeconds(StreamTimeouts.DEFAULT_FIRST_ITEM_SECONDS),
        Duration.ofSeconds(StreamTimeouts.DEFAULT_IDLE_SECONDS));
  }

  StreamTimeouts timeouts(Duration firstItem, Duration idle) {
    return StreamTimeouts.builder().firstItem(firstItem).idle(idle).scheduler(scheduler).build();
  }

  /** Runs {@code n} streams at once and waits for all of them (at most {@code limit}). */
  List<Outcome> run(LlmStreamClient client, int n, Duration limit) {
    return all(client, n).block(limit);
  }

  /** {@code n} streams at once, when subscribed; all their outcomes. */
  Mono<List<Outcome>> all(LlmStreamClient client, int n) {
    return Flux.range(0, n).flatMap(i -> one(client), Math.max(1, n)).collectList();
  }

  /** Runs streams {@code concurrency} at a time until {@code duration} has passed since the call. */
  Flux<Outcome> soak(LlmStreamClient client, int concurrency, Duration duration) {
    long end = System.nanoTime() + duration.toNanos();
    return Flux.range(0, Integer.MAX_VALUE)
        .takeWhile(i -> System.nanoTime() < end)
        .flatMap(i -> one(client), Math.max(1, concurrency));
  }

  Mono<Outcome> one(LlmStreamClient client) {
    return Mono.defer(() -> {
      long start = System.nanoTime();
      long[] first = {-1};
      long[] chunks = {0};
      return client.stream(REQUEST)
          .doOnNext(chunk -> {
            if (chunks[0]++ == 0) {
              first[0] = System.nanoTime() - start;
            }
          })
          .then(Mono.fromCallable(() -> new Outcome(first[0], chunks[0], System.nanoTime() - start, null)))
          .onErrorResume(e -> Mono.just(new Outcome(first[0], chunks[0], System.nanoTime() - start, kind(e))));
    });
  }

  /** Opens {@code n} streams that stay open, counting those that delivered their first chunk. */
  Disposable hold(LlmStreamClient client, int n, AtomicInteger started) {
    Disposable.Composite all = Disposables.composite();
    for (int i = 0; i < n; i++) {
      boolean[] seen = {false};
      all.add(client.stream(REQUEST).subscribe(c -> {
        if (!seen[0]) {
          seen[0] = true;
          started.incrementAndGet();
        }
      }, e -> { }));
    }
    return all;
  }

  /** The first of: idle timeout, first-item timeout, other timeout, HTTP status, else the simple class name. */
  static String kind(Throwable error) {
    List<Throwable> chain = new ArrayList<>();
    Set<Throwable> seen = Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    collect(error, chain, seen);
    for (Throwable t : chain) {
      if (t instanceof IdleTimeoutException) {
        return "idle_timeout";
      }
    }
    for (Throwable t : chain) {
      if (t instanceof FirstItemTimeoutException) {
        return "first_item_timeout";
      }
    }
    for (Throwable t : chain) {
      if (t instanceof HttpStatusException status) {
        return "http_" + status.status();
      }
    }
    for (Throwable t : chain) {
      if (t instanceof TimeoutException) {
        return "timeout";
      }
    }
    return error.getClass().getSimpleName();
  }

  private static void collect(Throwable t, List<Throwable> chain, Set<Throwable> seen) {
    if (t == null || !seen.add(t)) {
      return;
    }
    chain.add(t);
    for (Throwable each : Exceptions.unwrapMultiple(t)) {
      if (each != t) {
        collect(each, chain, seen);
      }
    }
    collect(t.getCause(), chain, seen);
    for (Throwable suppressed : t.getSuppressed()) {
      collect(suppressed, chain, seen);
    }
  }

  /** Error kinds and their counts, e.g. {@code {idle_timeout=2}}. */
  static Map<String, Integer> errors(List<Outcome> outcomes) {
    Map<String, Integer> counts = new TreeMap<>();
    outcomes.stream().filter(o -> o.error() != null).forEach(o -> counts.merge(o.error(), 1, Integer::sum));
    return counts;
  }

  /** The {@code p}-th percentile (0-100) of {@code nanos}, nearest rank; 0 when empty. */
  static long percentile(List<Long> nanos, double p) {
    if (nanos.isEmpty()) {
      return 0;
    }
    List<Long> sorted = new ArrayList<>(nanos);
    Collections.sort(sorted);
    int rank = (int) Math.ceil(p / 100.0 * sorted.size());
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
  }
}
