package io.breakwater.redis;

import io.breakwater.http.HttpResponses;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/**
 * An LLM provider on loopback, rate-limited as OpenAI describes it: a request bucket and a token bucket, each holding
 * its limit per interval and refilling continuously, on this JVM's clock. A call is counted when it arrives, at its
 * real size; a call that finds either bucket short is answered 429 with {@code retry-after}. Every answer carries
 * OpenAI's {@code x-ratelimit-*} headers. {@code GET /v1/chat?prompt=P&completion=C&latency=MS}.
 */
final class LoopbackProvider implements AutoCloseable {

  /** An answer: its usage and the response's headers. */
  record Reply(long promptTokens, long completionTokens, Map<String, List<String>> headers) {
    long totalTokens() {
      return promptTokens + completionTokens;
    }
  }

  private final double requestLimit;
  private final double tokenLimit;
  private final double intervalNanos;
  private final DisposableServer server;
  private double requests;
  private double tokens;
  private long last = System.nanoTime();
  private volatile long countUntil = Long.MAX_VALUE;

  final AtomicInteger answered = new AtomicInteger();
  final AtomicInteger rejected = new AtomicInteger();
  final AtomicLong tokensCounted = new AtomicLong();
  final AtomicInteger inFlight = new AtomicInteger();
  final AtomicInteger mostInFlight = new AtomicInteger();

  LoopbackProvider(long requestsPerInterval, long tokensPerInterval, Duration interval) {
    // HttpResponses' first use reads jar files (Jackson's module lookup in Redactor): do it here, not on an event loop
    initialise(HttpResponses.class);
    this.requestLimit = requestsPerInterval;
    this.tokenLimit = tokensPerInterval;
    this.intervalNanos = interval.toNanos();
    this.requests = requestLimit;
    this.tokens = tokenLimit;
    this.server = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes.get("/v1/chat", (request, response) -> {
          var params = new io.netty.handler.codec.http.QueryStringDecoder(request.uri()).parameters();
          long prompt = Long.parseLong(params.get("prompt").get(0));
          long completion = Long.parseLong(params.get("completion").get(0));
          long latency = Long.parseLong(params.get("latency").get(0));
          Verdict verdict = arrive(prompt + completion);
          verdict.headers.forEach(response::header);
          if (verdict.waitSeconds >= 0) {
            return response.status(429).header("retry-after", Long.toString(verdict.waitSeconds))
                .sendString(Mono.just("{\"error\":\"rate_limit_exceeded\"}"));
          }
          int now = inFlight.incrementAndGet();
          mostInFlight.accumulateAndGet(now, Math::max);
          return response.sendString(Mono.delay(Duration.ofMillis(latency)).map(x -> prompt + "," + completion)
              .doFinally(s -> inFlight.decrementAndGet()));
        }))
        .bindNow();
  }

  private static void initialise(Class<?> type) {
    try {
      Class.forName(type.getName(), true, type.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Counts tokens only for calls that arrive before {@code deadline} (System.nanoTime). */
  void countUntil(long deadline) {
    countUntil = deadline;
  }

  private record Verdict(long waitSeconds, Map<String, String> headers) {}

  private synchronized Verdict arrive(long cost) {
    long now = System.nanoTime();
    requests = Math.min(requestLimit, requests + (now - last) * requestLimit / intervalNanos);
    tokens = Math.min(tokenLimit, tokens + (now - last) * tokenLimit / intervalNanos);
    last = now;
    if (requests < 1 || tokens < cost) {
      rejected.incrementAndGet();
      double wait = Math.max(requests < 1 ? (1 - requests) * intervalNanos / requestLimit : 0,
          tokens < cost ? (cost - tokens) * intervalNanos / tokenLimit : 0);
      return new Verdict((long) Math.ceil(wait / 1e9), headers());
    }
    requests -= 1;
    tokens -= cost;
    answered.incrementAndGet();
    if (now - countUntil < 0) {
      tokensCounted.addAndGet(cost);
    }
    return new Verdict(-1, headers());
  }

  private Map<String, String> headers() {
    return Map.of(
        "x-ratelimit-limit-requests", Long.toString((long) requestLimit),
        "x-ratelimit-limit-tokens", Long.toString((long) tokenLimit),
        "x-ratelimit-remaining-requests", Long.toString((long) Math.floor(requests)),
        "x-ratelimit-remaining-tokens", Long.toString((long) Math.floor(tokens)),
        "x-ratelimit-reset-requests", goDuration((requestLimit - requests) * intervalNanos / requestLimit),
        "x-ratelimit-reset-tokens", goDuration((tokenLimit - tokens) * intervalNanos / tokenLimit));
  }

  /** As OpenAI sends it (Go's duration format), rounded up to the millisecond: {@code 1s}, {@code 20ms}. */
  private static String goDuration(double nanos) {
    long millis = (long) Math.ceil(nanos / 1e6);
    if (millis < 1000) {
      return millis + "ms";
    }
    return (millis / 1000) + "." + String.format(java.util.Locale.ROOT, "%03d", millis % 1000) + "s";
  }

  /** A client of this provider: its own connection pool, as another instance would have. */
  HttpClient client() {
    return HttpClient.create(reactor.netty.resources.ConnectionProvider.create("provider-client", 64))
        .host("127.0.0.1").port(server.port());
  }

  /** One call: its reply, or an {@code HttpStatusException} with the headers for a 429. */
  static Mono<Reply> call(HttpClient client, long prompt, long completion, long latencyMillis) {
    return client.get().uri("/v1/chat?prompt=" + prompt + "&completion=" + completion + "&latency=" + latencyMillis)
        .response((response, body) -> response.status().code() >= 400
            ? HttpResponses.<Reply>statusError(response, body)
            : body.aggregate().asString().map(text -> new Reply(prompt, completion, HttpResponses.headers(response))))
        .next();
  }

  @Override
  public void close() {
    server.disposeNow();
  }
}
