package io.breakwater.stream.llm;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.hedge.HedgePolicy;
import io.breakwater.internal.stream.llm.HttpTransport;
import io.breakwater.internal.stream.llm.LlmStreamEngine;
import io.breakwater.internal.stream.llm.Transport;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.StreamTruncatedByTimeoutException;
import io.breakwater.stream.StreamTruncatedException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientRequest;
import reactor.netty.http.client.HttpClientResponse;
import reactor.netty.resources.ConnectionProvider;

/**
 * A streaming LLM client on Reactor Netty: typed deltas ({@link LlmDelta}) from OpenAI chat completions and the
 * servers compatible with it, OpenAI Responses, Anthropic Messages, Gemini and Ollama ({@link Dialect}), assembled
 * into an {@link LlmResponse} on demand, timed on content, retried with {@code retryWithBudget} only while that is
 * safe, and closed when the caller stops listening.
 *
 * <pre>{@code
 * LlmStreamClient client = LlmStreamClient.builder("http://127.0.0.1:8000", Dialect.OPENAI_CHAT)
 *     .header("Authorization", "Bearer " + key)
 *     .build();
 *
 * Mono<LlmResponse> answer = client.stream(Map.of("model", "gpt-4o-mini",
 *         "messages", List.of(Map.of("role", "user", "content", "Hello"))))
 *     .as(LlmResponse::aggregate)
 *     .transformDeferred(withDeadline(Duration.ofSeconds(60)));
 * }</pre>
 *
 * <h2>Behaviour</h2>
 * <ul>
 *   <li><b>Content, not events, is progress.</b> Text, refusal, reasoning, tool-call starts and arguments, citations
 *       and unmodelled output count; framing (role-only deltas, {@code message_start}, {@code response.created},
 *       usage) and heartbeats never do. The first-token budget bounds the whole call from the caller's subscription,
 *       across retries (each attempt has what remains); the idle budget runs from the first content on (so a model
 *       that thinks before answering is judged by the first-token budget only, and time spent waiting for a pooled
 *       connection never counts as the server being idle). Defaults: the deadline's per-call and idle budgets, 12 s
 *       and 3 s without a deadline ({@link Builder#timeouts}).</li>
 *   <li><b>Retry and resume</b> by {@link io.breakwater.Breakwater#retryWithBudget} with the client's
 *       {@link RetryPolicy} (full jitter, retry budgets, {@code Retry-After} capped, nested retries not multiplied):
 *       a retryable failure before the first content is retried (nothing was delivered, framing included); after it,
 *       a dropped or stalled stream is resumed where the server allows (SSE ids with {@code Last-Event-ID}, printable
 *       and at most 256 characters; OpenAI Responses created with {@code "background": true}, by
 *       {@code starting_after}), and otherwise ends the call.</li>
 *   <li><b>Errors</b>: a server error event is an {@link LlmStreamException}, before the first token or after it;
 *       a stream cut after content is a {@link StreamTruncatedException}, or a
 *       {@link StreamTruncatedByTimeoutException} (a {@link java.util.concurrent.TimeoutException}) when a timeout
 *       cut it, both carrying the partial {@link LlmResponse}; a complete stream whose answer was cut short (length,
 *       content filter, pause) ends in an {@link LlmIncompleteException}. An HTTP error status is an
 *       {@link io.breakwater.failure.HttpStatusException} with the response headers and at most 4 KiB of the body
 *       read (then the connection is closed). Failures before the first content that were retried arrive as the
 *       {@code RetryExhaustedException} of {@code retryWithBudget}, except server error events.</li>
 *   <li><b>Bounds</b>: an event (or NDJSON line) of at most {@link Builder#maxEventBytes} (1 MiB), an output of at
 *       most {@link Builder#maxResponseBytes} (4 MiB of UTF-8), a call of at most {@link Builder#maxDuration} (10 min,
 *       applied as a deadline inside the caller's).</li>
 *   <li><b>Requests</b>: {@code "stream": true} is set (not for Gemini); OpenAI chat gets
 *       {@code stream_options.include_usage: true} unless the request sets it ({@link Builder#includeUsage}).</li>
 *   <li><b>Hedging</b> ({@link Builder#hedge}, off by default): a backup attempt for a call with no content by the
 *       hedge delay; the first attempt with content wins, the others are cancelled. {@code attempts} in
 *       {@link LlmDelta.Done} and {@link LlmCallEvent} count every request sent, hedges included.</li>
 *   <li><b>Connections</b>: Reactor Netty's silent retry is disabled; cancelling closes the connection; a redirect
 *       is followed only when the {@link Builder#httpClient} follows redirects and it stays on the base URL's scheme,
 *       host and port (the credential headers and the prompt never go to another host: another redirect fails as an
 *       {@code HttpStatusException}); with {@link Builder#sendDeadline} each attempt sends the time it has left in
 *       the {@code Breakwater-Timeout} header (off by default); the default pool holds up to
 *       {@value #DEFAULT_MAX_CONNECTIONS} connections (one per open stream) and queues at most as many more.</li>
 *   <li><b>Metrics</b>: {@code breakwater.stream.retries}, {@code .resumes} (attempts actually made) and
 *       {@code .truncations} (calls that failed after content), tagged {@code dialect} and {@code kind};
 *       {@code breakwater.retry.*} of the retry policy; {@code breakwater.stream.timeouts}.</li>
 * </ul>
 *
 * <p>Immutable and thread-safe: build one per endpoint and share it.
 */
public final class LlmStreamClient {

  /** The most connections of the default pool: one per open stream. */
  public static final int DEFAULT_MAX_CONNECTIONS = 1000;
  /** The default largest event or NDJSON line: 1 MiB. */
  public static final int DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;
  /** The default largest output of one response, in UTF-8 bytes: 4 MiB. */
  public static final long DEFAULT_MAX_RESPONSE_BYTES = 4L * 1024 * 1024;
  /** The default longest call: 10 minutes. */
  public static final Duration DEFAULT_MAX_DURATION = Duration.ofMinutes(10);
  /** The longest {@link Builder#maxDuration} accepted: 7 days. */
  private static final Duration MAX_MAX_DURATION = Duration.ofDays(7);
  /** The default retries and resumes of a call (with the policy's other defaults). */
  public static final int DEFAULT_MAX_RETRIES = 2;

  private final ObjectMapper mapper;
  private final Dialect dialect;
  private final boolean includeUsage;
  private final LlmStreamEngine engine;

  private LlmStreamClient(Builder b, LlmStreamEngine.Settings settings) {
    this.mapper = b.mapper;
    this.dialect = b.dialect;
    this.includeUsage = b.includeUsage;
    this.engine = new LlmStreamEngine(settings);
  }

  /** A builder for the server at {@code baseUrl} (scheme, host and port, e.g. {@code http://127.0.0.1:8000}). */
  public static Builder builder(String baseUrl, Dialect dialect) {
    return new Builder(baseUrl, dialect);
  }

  /**
   * Streams the response to {@code request}: any object Jackson serialises to a JSON object (a {@code Map}, an
   * {@code ObjectNode}, a record). Each subscription makes its own call.
   *
   * @throws IllegalArgumentException if {@code request} does not serialise to a JSON object
   */
  public Flux<LlmDelta> stream(Object request) {
    Objects.requireNonNull(request, "request");
    byte[] body;
    try {
      JsonNode tree = mapper.valueToTree(request);
      if (!(tree instanceof ObjectNode json)) {
        throw new IllegalArgumentException("it serialises to " + (tree == null ? "null" : tree.getNodeType()));
      }
      if (dialect != Dialect.GEMINI) {
        json.put("stream", true);
      }
      if (dialect == Dialect.OPENAI_CHAT && includeUsage && !json.path("stream_options").has("include_usage")) {
        JsonNode options = json.get("stream_options");
        (options instanceof ObjectNode o ? o : json.putObject("stream_options")).put("include_usage", true);
      }
      body = mapper.writeValueAsBytes(json);
    } catch (IllegalArgumentException | JsonProcessingException e) {
      throw new IllegalArgumentException("LLM request must serialise to a JSON object: " + e.getMessage(), e);
    }
    return engine.stream(body);
  }

  /**
   * Streams the response to {@code request} into {@code onDelta} as it arrives, and completes with the assembled
   * {@link LlmResponse}: one subscription, one call (no second request for the whole answer). Use it to show tokens
   * and keep the answer, e.g. for the next turn or an {@code idempotentBy} store:
   *
   * <pre>{@code
   * Mono<LlmResponse> answer = client.streamAndAggregate(request, delta -> {
   *   if (delta instanceof LlmDelta.Text t) {
   *     ui.append(t.text());
   *   }
   * });
   * }</pre>
   *
   * <p>{@code onDelta} sees every delta, in order, on the thread that decoded it, before it is assembled; it must
   * not block. If it throws, the call is cancelled and the {@code Mono} fails with what it threw. The failures are
   * those of {@link #stream(Object)}, each still carrying the partial response ({@link LlmResponse#partialOf}).
   * Each subscription makes its own call.
   *
   * @throws IllegalArgumentException if {@code request} does not serialise to a JSON object
   */
  public Mono<LlmResponse> streamAndAggregate(Object request, Consumer<? super LlmDelta> onDelta) {
    Objects.requireNonNull(onDelta, "onDelta");
    return stream(request).doOnNext(onDelta).as(LlmResponse::aggregate);
  }

  /** Builds an {@link LlmStreamClient}; not thread-safe; {@link #build()} validates. */
  public static final class Builder {
    private final String baseUrl;
    private final Dialect dialect;
    private @Nullable String path;
    private final Map<String, String> headers = new LinkedHashMap<>();
    private @Nullable HttpClient httpClient;
    private ObjectMapper mapper = new ObjectMapper();
    private @Nullable StreamTimeouts timeouts;
    private @Nullable RetryPolicy retry;
    private @Nullable CircuitBreaker breaker;
    private Duration maxDuration = DEFAULT_MAX_DURATION;
    private int maxEventBytes = DEFAULT_MAX_EVENT_BYTES;
    private long maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES;
    private boolean includeUsage = true;
    private boolean rawEvents;
    private @Nullable Supplier<Scheduler> scheduler;
    private MeterRegistry meterRegistry = Metrics.globalRegistry;
    private @Nullable Consumer<LlmCallEvent> listener;
    private @Nullable Transport transport;
    private @Nullable HedgePolicy hedge;
    private boolean sendDeadline;

    private Builder(String baseUrl, Dialect dialect) {
      this.baseUrl = Objects.requireNonNull(baseUrl, "baseUrl");
      this.dialect = Objects.requireNonNull(dialect, "dialect");
      this.path = dialect.defaultPath();
    }

    /**
     * The request path (default: the dialect's, e.g. {@code /v1/chat/completions}; Gemini has none: give
     * {@code /v1beta/models/{model}:streamGenerateContent?alt=sse}, or the Vertex AI path).
     */
    public Builder path(String path) {
      this.path = Objects.requireNonNull(path, "path");
      return this;
    }

    /** A header sent with every request (e.g. {@code Authorization}, {@code x-api-key}, {@code anthropic-version}). */
    public Builder header(String name, String value) {
      headers.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
      return this;
    }

    /**
     * The Reactor Netty client to start from (pool, TLS, proxy); its retry is disabled regardless. Without one the
     * client gets its own pool of up to {@value #DEFAULT_MAX_CONNECTIONS} connections with as many pending
     * acquisitions; size your own pool to the streams you keep open at once, as each holds a connection.
     */
    public Builder httpClient(HttpClient httpClient) {
      this.httpClient = Objects.requireNonNull(httpClient, "httpClient");
      return this;
    }

    /**
     * Whether each attempt sends the time it has left in the {@code Breakwater-Timeout} header (default
     * {@code false}). Turn it on for a server you run (a gateway or model server that honours the header, see
     * {@code DeadlineHeader}); leave it off for a third-party provider: it ignores the header, and the header tells
     * it (and every proxy on the way) how long your callers wait.
     */
    public Builder sendDeadline(boolean sendDeadline) {
      this.sendDeadline = sendDeadline;
      return this;
    }

    /** The Jackson mapper for requests and events. */
    public Builder objectMapper(ObjectMapper mapper) {
      this.mapper = Objects.requireNonNull(mapper, "mapper");
      return this;
    }

    /**
     * The first-token budget ({@code firstItem}: from subscription to the first content, across retries) and the
     * idle budget ({@code idle}: between contents). Default: both from the deadline (12 s and 3 s without one).
     * They are counted in {@link #meterRegistry}.
     */
    public Builder timeouts(StreamTimeouts timeouts) {
      this.timeouts = Objects.requireNonNull(timeouts, "timeouts");
      return this;
    }

    /**
     * How calls are retried and resumed ({@code maxRetries} counts both). Default: a policy named after the dialect
     * ({@code llm:openai_chat}, the {@code dependency} tag of its meters) with {@value #DEFAULT_MAX_RETRIES} retries
     * and the policy's other defaults; its retry budget is that name's, shared by every client of the dialect on the
     * same scheduler. Name yours after the endpoint: clients of one endpoint then share one budget.
     */
    public Builder retry(RetryPolicy retry) {
      this.retry = Objects.requireNonNull(retry, "retry");
      return this;
    }

    /** A breaker that guards every attempt (a failure after content counts too); none by default. */
    public Builder breaker(CircuitBreaker breaker) {
      this.breaker = Objects.requireNonNull(breaker, "breaker");
      return this;
    }

    /**
     * First-token hedging: an attempt with no content by the policy's delay gets a backup attempt (up to
     * {@code maxHedges}, within the policy's budget); the first to deliver content wins and the others are cancelled,
     * their connections closed. Framing and heartbeats are not content; a terminal event without content is an
     * answer. After the first content there is no more hedging: a stall is then resumed or ends the call, never raced.
     * A hedge is not a retry: when every attempt of a round failed, the retry policy makes one retry, hedged again.
     * Each attempt, hedges included, passes the {@link #breaker} and sends the time it has left. None by default.
     *
     * <pre>{@code
     * LlmStreamClient client = LlmStreamClient.builder("http://127.0.0.1:8000", Dialect.OPENAI_CHAT)
     *     .hedge(HedgePolicy.builder().name("llm:first-token").delay(Duration.ofSeconds(2)).build())
     *     .build();
     * }</pre>
     */
    public Builder hedge(HedgePolicy policy) {
      this.hedge = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /** The longest call, retries included (default 10 min), applied as a deadline inside the caller's. */
    public Builder maxDuration(Duration maxDuration) {
      this.maxDuration = Objects.requireNonNull(maxDuration, "maxDuration");
      return this;
    }

    /** The largest SSE line or event, or NDJSON line, accepted (default 1 MiB). */
    public Builder maxEventBytes(int maxEventBytes) {
      this.maxEventBytes = maxEventBytes;
      return this;
    }

    /**
     * The largest output kept for one response, in UTF-8 bytes of text, refusal, reasoning, signatures, tool calls
     * and citations (their raw JSON included) (default 4 MiB); past it the stream ends in a
     * {@link StreamTruncatedException}. The entries that hold the output (choices, tool calls, citations, signatures,
     * unmodelled outputs) count too, even empty: one per 256 bytes of the bound (at least 64).
     */
    public Builder maxResponseBytes(long maxResponseBytes) {
      this.maxResponseBytes = maxResponseBytes;
      return this;
    }

    /**
     * Whether OpenAI chat requests get {@code stream_options.include_usage: true} when they do not set it (default
     * true); turn it off for a compatible server that rejects the field.
     */
    public Builder includeUsage(boolean includeUsage) {
      this.includeUsage = includeUsage;
      return this;
    }

    /** Whether every event's JSON is also delivered, as {@link LlmDelta.Event} (default false). */
    public Builder rawEvents(boolean rawEvents) {
      this.rawEvents = rawEvents;
      return this;
    }

    /** Where time comes from (default: the deadline's scheduler, else {@code Schedulers.parallel()}). */
    public Builder scheduler(Supplier<Scheduler> scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * Where {@code breakwater.stream.retries}, {@code .resumes}, {@code .truncations} and {@code .timeouts} are
     * counted, and the default retry policy's meters (default {@code Metrics.globalRegistry}).
     */
    public Builder meterRegistry(MeterRegistry meterRegistry) {
      this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
      return this;
    }

    /** Receives one {@link LlmCallEvent} per call, when it ends; none by default. */
    public Builder callListener(Consumer<LlmCallEvent> listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /** For tests: attempts go to {@code transport} instead of HTTP. */
    Builder transport(Transport transport) {
      this.transport = Objects.requireNonNull(transport, "transport");
      return this;
    }

    public LlmStreamClient build() {
      checkBaseUrl(baseUrl);
      if (path == null) {
        throw new IllegalArgumentException("Dialect " + dialect + " has no default path: give .path(..), e.g. "
            + "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
      }
      if (maxEventBytes < 16) {
        throw new IllegalArgumentException("maxEventBytes is " + maxEventBytes
            + ": give at least 16 bytes (the default is 1 MiB)");
      }
      if (maxResponseBytes <= 0) {
        throw new IllegalArgumentException("maxResponseBytes is " + maxResponseBytes
            + ": give a positive number of bytes (the default is 4 MiB)");
      }
      if (maxDuration.isNegative() || maxDuration.isZero() || maxDuration.compareTo(MAX_MAX_DURATION) > 0) {
        throw new IllegalArgumentException("maxDuration is " + maxDuration
            + ": give a positive duration of at most 7 days (the default is 10 min)");
      }
      LlmStreamEngine.Settings s = new LlmStreamEngine.Settings();
      s.dialect = dialect;
      s.mapper = mapper;
      s.transport = transport != null ? transport : new HttpTransport(http(), path);
      s.headers = Map.copyOf(headers);
      s.maxEventBytes = maxEventBytes;
      s.timeouts = timeouts != null ? timeouts
          : StreamTimeouts.builder().firstItemFromDeadline().idleFromDeadline().meterRegistry(meterRegistry).build();
      s.retry = retry != null ? retry : RetryPolicy.builder()
          .name("llm:" + dialect.name().toLowerCase(Locale.ROOT))
          .maxRetries(DEFAULT_MAX_RETRIES)
          .meterRegistry(meterRegistry)
          .build();
      s.breaker = breaker;
      s.hedge = hedge;
      s.maxDuration = maxDuration;
      s.maxResponseBytes = maxResponseBytes;
      s.rawEvents = rawEvents;
      s.scheduler = scheduler;
      s.meterRegistry = meterRegistry;
      s.listener = listener;
      return new LlmStreamClient(this, s);
    }

    private HttpClient http() {
      HttpClient base = httpClient != null ? httpClient
          : HttpClient.create(ConnectionProvider.builder("breakwater-llm")
              .maxConnections(DEFAULT_MAX_CONNECTIONS)
              .pendingAcquireMaxCount(DEFAULT_MAX_CONNECTIONS)
              .maxIdleTime(Duration.ofSeconds(30))
              .build());
      String accept = dialect.isNdjson() ? "application/x-ndjson" : "text/event-stream";
      HttpClient client = sameOriginRedirectsOnly(base.baseUrl(baseUrl).disableRetry(true).headers(h -> {
        h.set("Content-Type", "application/json");
        h.set("Accept", accept);
        headers.forEach(h::set);
      }));
      return sendDeadline ? DeadlineHeader.standard().sendOn(client) : client;
    }

    /**
     * {@code client} following only the redirects it followed that stay on the same scheme, host and port: Reactor
     * Netty drops only {@code Authorization} on a redirect, so {@code x-api-key}, {@code x-goog-api-key} and the
     * prompt went to whatever host a {@code Location} named.
     */
    private static HttpClient sameOriginRedirectsOnly(HttpClient client) {
      BiPredicate<HttpClientRequest, HttpClientResponse> follows = client.configuration().followRedirectPredicate();
      if (follows == null) {
        return client;
      }
      return client.followRedirect((request, response) -> follows.test(request, response)
          && sameOrigin(request.resourceUrl(), response.responseHeaders().get(HttpHeaderNames.LOCATION)));
    }

    private static boolean sameOrigin(@Nullable String from, @Nullable String location) {
      if (from == null || location == null) {
        return false;
      }
      try {
        URI origin = new URI(from);
        URI target = origin.resolve(new URI(location));
        return Objects.equals(lower(origin.getScheme()), lower(target.getScheme()))
            && Objects.equals(lower(origin.getHost()), lower(target.getHost())) && port(origin) == port(target);
      } catch (URISyntaxException | IllegalArgumentException malformed) {
        return false;
      }
    }

    private static @Nullable String lower(@Nullable String s) {
      return s == null ? null : s.toLowerCase(Locale.ROOT);
    }

    private static int port(URI uri) {
      return uri.getPort() >= 0 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    }

    /** An http(s) URL with a host and no credentials; the message never quotes what it rejects. */
    private static void checkBaseUrl(String baseUrl) {
      URI uri;
      try {
        uri = new URI(baseUrl);
      } catch (URISyntaxException e) {
        throw new IllegalArgumentException("baseUrl is not a valid URL (at index " + e.getIndex()
            + "): give scheme, host and port, e.g. http://127.0.0.1:8000");
      }
      String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
      if (!scheme.equals("http") && !scheme.equals("https")) {
        throw new IllegalArgumentException("baseUrl is not an http(s) URL: give scheme, host and port, e.g. "
            + "http://127.0.0.1:8000");
      }
      if (uri.getRawUserInfo() != null || uri.getRawAuthority() != null && uri.getRawAuthority().contains("@")) {
        throw new IllegalArgumentException("baseUrl carries credentials before its host: remove them and send them "
            + "in a header instead, e.g. .header(\"Authorization\", \"Bearer \" + key)");
      }
      if (uri.getHost() == null) {
        throw new IllegalArgumentException("baseUrl has no host: give scheme, host and port, e.g. "
            + "http://127.0.0.1:8000");
      }
    }
  }
}
