package io.breakwater.benchmarks.load;

import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.SideEffect;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.util.retry.Retry;

/**
 * Tool calls against the {@link LoadServer}'s {@code /tool}: through a Breakwater {@link Tool} with the defaults a
 * newcomer gets plus a default-value fallback, or through the hand-written Reactor baseline (plain {@code timeout}
 * and {@code retryWhen}, the same fallback value), paced at a given rate.
 */
final class ToolCalls {

  static final String FALLBACK = "fallback";

  private final HttpClient http;
  private final AtomicInteger tools = new AtomicInteger();

  ToolCalls(String baseUrl) {
    this.http = HttpClient.create(ConnectionProvider.builder("load-tools").maxConnections(4_000)
        .pendingAcquireMaxCount(-1).build()).baseUrl(baseUrl);
  }

  /** One call to the server's tool endpoint: its body, or an {@link HttpStatusException} for a 5xx or 429. */
  Mono<String> request(String script) {
    return http.headers(h -> h.set("X-Load", script)).post().uri("/tool")
        .responseSingle((response, body) -> {
          int status = response.status().code();
          return status >= 400
              ? body.asString().defaultIfEmpty("").then(Mono.error(new HttpStatusException(status)))
              : body.asString().defaultIfEmpty("");
        });
  }

  /**
   * A Breakwater tool as a newcomer builds it: read-only, default adaptive timeouts, default retry and budget, a
   * default breaker registry (tool and family breakers), and a default value as its last fallback.
   */
  Function<String, Mono<String>> breakwater(String script) {
    String name = "load" + tools.incrementAndGet() + ".search";
    ToolDescriptor descriptor = ToolDescriptor.builder(name)
        .sideEffect(SideEffect.READ_ONLY)
        .breakers(CircuitBreakerRegistry.ofDefaults())
        .eventLog(event -> { })
        .build();
    Tool<String, String> tool = Tool.of(descriptor, (String args) -> request(script), String.class)
        .withFallbacks(Fallbacks.<String, String>builder().orDefault(FALLBACK).build());
    return tool::call;
  }

  /** The hand-written baseline: {@code timeout(2 s)}, two retries with jittered backoff, the same default value. */
  Function<String, Mono<String>> baseline(String script) {
    return args -> request(script)
        .timeout(Duration.ofSeconds(2))
        .retryWhen(Retry.backoff(2, Duration.ofMillis(100)).jitter(1.0))
        .onErrorReturn(FALLBACK);
  }

  /** How one call went: when it started (nanos since the run began), how long it took, and what it returned. */
  record Outcome(long startNanos, long tookNanos, boolean fallback, boolean failed) { }

  /** Calls {@code call} at {@code perSecond} for {@code duration} (in ticks of 10 ms) and waits for the last. */
  static Flux<Outcome> paced(Function<String, Mono<String>> call, int perSecond, Duration duration) {
    long ticks = Math.max(1, duration.toMillis() / 10);
    long runStart = System.nanoTime();
    return Flux.interval(Duration.ofMillis(10)).take(ticks).onBackpressureBuffer()
        .flatMap(tick -> Flux.range(0, share(perSecond, tick)), 1)
        .flatMap(i -> {
          long start = System.nanoTime();
          return call.apply("q")
              .map(value -> new Outcome(start - runStart, System.nanoTime() - start, FALLBACK.equals(value), false))
              .onErrorResume(e -> Mono.just(new Outcome(start - runStart, System.nanoTime() - start, false, true)));
        }, 1 << 16);
  }

  /** Calls in the 10 ms tick {@code tick} so that {@code perSecond} is met exactly over each second. */
  private static int share(int perSecond, long tick) {
    long before = tick * perSecond / 100;
    long upTo = (tick + 1) * perSecond / 100;
    return (int) (upTo - before);
  }

  static List<Long> took(List<Outcome> outcomes) {
    List<Long> took = new ArrayList<>(outcomes.size());
    outcomes.forEach(o -> took.add(o.tookNanos()));
    return took;
  }
}
