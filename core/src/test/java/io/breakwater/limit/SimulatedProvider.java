package io.breakwater.limit;

import io.breakwater.failure.HttpStatusException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * An LLM provider's rate limiter as OpenAI and Anthropic describe theirs: a request bucket and a token bucket, each
 * holding its per-minute limit and refilling continuously. A call that finds either short is answered 429 with
 * {@code retry-after}; every answer carries the provider's rate-limit headers in its real format. A call is counted
 * when it arrives, at its real size (prompt and completion), which the caller only estimates.
 */
final class SimulatedProvider {

  enum Format { OPENAI, ANTHROPIC }

  /** An answer: its usage and the response headers. */
  record Reply(long promptTokens, long completionTokens, Map<String, List<String>> headers) {
    long totalTokens() {
      return promptTokens + completionTokens;
    }
  }

  private final Scheduler clock;
  private final Format format;
  private final double requestLimit;
  private final double tokenLimit;
  private double requests;
  private double tokens;
  private long last;

  private final long runEnd;
  int answered;
  int rejected;
  long tokensCounted;
  /** The tokens counted for calls that arrived before the end of the run. */
  long tokensCountedInRun;

  SimulatedProvider(Scheduler clock, Format format, long requestsPerMinute, long tokensPerMinute, Duration run) {
    this.clock = clock;
    this.runEnd = clock.now(TimeUnit.NANOSECONDS) + run.toNanos();
    this.format = format;
    this.requestLimit = requestsPerMinute;
    this.tokenLimit = tokensPerMinute;
    this.requests = requestsPerMinute;
    this.tokens = tokensPerMinute;
    this.last = clock.now(TimeUnit.NANOSECONDS);
  }

  /** A call of {@code prompt} tokens that will answer {@code completion} tokens after {@code latency}. */
  Mono<Reply> call(long prompt, long completion, Duration latency) {
    return Mono.defer(() -> {
      long cost = prompt + completion;
      synchronized (this) {
        refill();
        if (requests < 1 || tokens < cost) {
          rejected++;
          Map<String, List<String>> headers = headers();
          double wait = Math.max(requests < 1 ? (1 - requests) / perNano(requestLimit) : 0,
              tokens < cost ? (cost - tokens) / perNano(tokenLimit) : 0);
          headers.put("retry-after", List.of(Long.toString((long) Math.ceil(wait / 1e9))));
          return Mono.error(new HttpStatusException(429, headers, "rate limited"));
        }
        requests -= 1;
        tokens -= cost;
        answered++;
        tokensCounted += cost;
        if (last < runEnd) {
          tokensCountedInRun += cost;
        }
      }
      Map<String, List<String>> headers = headers();
      return Mono.delay(latency, clock).thenReturn(new Reply(prompt, completion, headers));
    });
  }

  /** Another client of the same key takes {@code cost} tokens and a request, if they are there. */
  synchronized void otherClientTakes(long cost) {
    refill();
    if (requests >= 1 && tokens >= cost) {
      requests -= 1;
      tokens -= cost;
    }
  }

  private static double perNano(double perMinute) {
    return perMinute / 60e9;
  }

  private void refill() {
    long now = clock.now(TimeUnit.NANOSECONDS);
    requests = Math.min(requestLimit, requests + (now - last) * perNano(requestLimit));
    tokens = Math.min(tokenLimit, tokens + (now - last) * perNano(tokenLimit));
    last = now;
  }

  /** The headers of an answer given now. Guarded by {@code this}. */
  private synchronized Map<String, List<String>> headers() {
    Map<String, List<String>> h = new LinkedHashMap<>();
    long requestsFullIn = (long) Math.ceil((requestLimit - requests) / perNano(requestLimit));
    long tokensFullIn = (long) Math.ceil((tokenLimit - tokens) / perNano(tokenLimit));
    if (format == Format.OPENAI) {
      h.put("x-ratelimit-limit-requests", List.of(Long.toString((long) requestLimit)));
      h.put("x-ratelimit-limit-tokens", List.of(Long.toString((long) tokenLimit)));
      h.put("x-ratelimit-remaining-requests", List.of(Long.toString((long) Math.floor(requests))));
      h.put("x-ratelimit-remaining-tokens", List.of(Long.toString((long) Math.floor(tokens))));
      h.put("x-ratelimit-reset-requests", List.of(goDuration(requestsFullIn)));
      h.put("x-ratelimit-reset-tokens", List.of(goDuration(tokensFullIn)));
    } else {
      long nowMillis = clock.now(TimeUnit.MILLISECONDS);
      h.put("anthropic-ratelimit-requests-limit", List.of(Long.toString((long) requestLimit)));
      h.put("anthropic-ratelimit-requests-remaining", List.of(Long.toString((long) Math.floor(requests))));
      h.put("anthropic-ratelimit-requests-reset", List.of(instant(nowMillis, requestsFullIn)));
      h.put("anthropic-ratelimit-tokens-limit", List.of(Long.toString((long) tokenLimit)));
      h.put("anthropic-ratelimit-tokens-remaining", List.of(Long.toString((long) Math.floor(tokens))));
      h.put("anthropic-ratelimit-tokens-reset", List.of(instant(nowMillis, tokensFullIn)));
    }
    return h;
  }

  /** As Go's {@code time.Duration.String()} prints it, rounded up to the millisecond: {@code 6m0s}, {@code 20ms}. */
  static String goDuration(long nanos) {
    long millis = (nanos + 999_999) / 1_000_000;
    if (millis < 1000) {
      return millis + "ms";
    }
    long minutes = millis / 60_000;
    long rest = millis % 60_000;
    String seconds = rest % 1000 == 0 ? Long.toString(rest / 1000)
        : String.format(java.util.Locale.ROOT, "%d.%03d", rest / 1000, rest % 1000).replaceAll("0+$", "");
    return (minutes > 0 ? minutes + "m" : "") + seconds + "s";
  }

  /** An RFC 3339 instant, rounded up to the second, as Anthropic sends it. */
  private static String instant(long nowMillis, long inNanos) {
    Instant at = Instant.ofEpochMilli(nowMillis).plusNanos(inNanos);
    Instant up = at.truncatedTo(ChronoUnit.SECONDS).equals(at) ? at
        : at.truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
    return up.toString();
  }
}
