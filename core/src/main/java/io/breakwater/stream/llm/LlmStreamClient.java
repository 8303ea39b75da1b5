package io.breakwater.stream.llm;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.internal.stream.llm.LlmStreamEngine;
import io.breakwater.stream.ServerSentEvents;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.StreamTruncatedException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.netty.http.client.HttpClient;

/**
 * A streaming LLM client on Reactor Netty that times streams on progress, retries them only when that is safe, and
 * closes the connection when the caller stops listening. It speaks OpenAI-compatible chat completions, OpenAI
 * Responses and Anthropic Messages ({@link Dialect}).
 *
 * <pre>{@code
 * LlmStreamClient client = LlmStreamClient.builder("http://127.0.0.1:8000", Dialect.OPENAI_CHAT)
 *     .header("Authorization", "Bearer " + key)
 *     .build();
 *
 * Flux<String> tokens = client.stream(Map.of("model", "gpt-4o-mini",
 *         "messages", List.of(Map.of("role", "user", "content", "Hello"))))
 *     .map(LlmChunk::text)
 *     .transformDeferred(withDeadline(Duration.ofSeconds(60)));
 * }</pre>
 *
 * <h2>Behaviour</h2>
 * <ul>
 *   <li><b>Timeouts</b> on a progress clock ({@link StreamTimeouts}): by default the first event must come within the
 *       deadline's per-call budget and events must then keep coming within its idle budget (12 s and 3 s without a
 *       deadline). Comments and {@code ping} events are heartbeats: they do not count.</li>
 *   <li><b>Errors</b>: an HTTP error status before the first byte is an
 *       {@link io.breakwater.failure.HttpStatusException} with the response headers; an error reported inside the
 *       stream is an {@link LlmStreamException}, classified by its type; a stream that ends without its terminal
 *       event is not a success.</li>
 *   <li><b>Safe retry</b>: a retryable failure (429 and 5xx honouring {@code Retry-After}, timeouts, dropped
 *       connections, overloads) is retried, up to {@link Builder#maxRetries(int)} times, only while no chunk has
 *       been delivered. After that the stream is <em>resumed</em> with {@code Last-Event-ID} if the server gave
 *       event ids, or for OpenAI Responses with {@code starting_after} its last sequence number (up to
 *       {@link Builder#maxResumes(int)} times; events already seen are dropped), and otherwise
 *       fails with a {@link StreamTruncatedException} carrying the partial output. Retries and resumes never
 *       outlive the deadline.</li>
 *   <li><b>Metrics</b>: {@code breakwater.stream.retries}, {@code .resumes} and {@code .truncations}, tagged
 *       {@code dialect} and {@code kind}, in {@link Builder#meterRegistry} (default
 *       {@code Metrics.globalRegistry}).</li>
 *   <li><b>Connections</b>: Reactor Netty's silent retry of requests is disabled; cancelling the stream closes the
 *       connection; the deadline travels in the {@code Breakwater-Timeout} header.</li>
 * </ul>
 *
 * <p>Immutable and thread-safe: build one per endpoint and share it.
 */
public final class LlmStreamClient {

  private final ObjectMapper mapper;
  private final LlmStreamEngine engine;

  private LlmStreamClient(Builder b) {
    this.mapper = b.mapper;
    HttpClient http = b.httpClient.baseUrl(b.baseUrl).disableRetry(true).headers(h -> {
      h.set("Content-Type", "application/json");
      h.set("Accept", "text/event-stream");
      b.headers.forEach(h::set);
    });
    this.engine = new LlmStreamEngine(DeadlineHeader.standard().sendOn(http), b.path, b.dialect, b.mapper,
        ServerSentEvents.builder().comments(true).maxEventBytes(b.maxEventBytes).build(), b.timeouts,
        b.maxRetries, b.maxResumes, b.backoff, b.maxBackoff, b.scheduler, b.meterRegistry);
  }

  /** A builder for the server at {@code baseUrl} (scheme, host and port, e.g. {@code http://127.0.0.1:8000}). */
  public static Builder builder(String baseUrl, Dialect dialect) {
    return new Builder(baseUrl, dialect);
  }

  /**
   * Streams the response to {@code request}: any object Jackson serialises to a JSON object (a {@code Map}, an
   * {@code ObjectNode}, a record); {@code "stream": true} is set on it. Each subscription makes its own call.
   *
   * @throws IllegalArgumentException if {@code request} does not serialise to a JSON object
   */
  public Flux<LlmChunk> stream(Object request) {
    Objects.requireNonNull(request, "request");
    byte[] body;
    try {
      ObjectNode json = mapper.valueToTree(request);
      json.put("stream", true);
      body = mapper.writeValueAsBytes(json);
    } catch (IllegalArgumentException | ClassCastException | JsonProcessingException e) {
      throw new IllegalArgumentException("LLM request must serialise to a JSON object: " + e.getMessage(), e);
    }
    return engine.stream(body);
  }

  /** Builds an {@link LlmStreamClient}; not thread-safe; {@link #build()} validates. */
  public static final class Builder {
    private final String baseUrl;
    private final Dialect dialect;
    private String path;
    private final Map<String, String> headers = new LinkedHashMap<>();
    private HttpClient httpClient = HttpClient.create();
    private ObjectMapper mapper = new ObjectMapper();
    private StreamTimeouts timeouts = StreamTimeouts.builder().firstItemFromDeadline().idleFromDeadline().build();
    private int maxRetries = 2;
    private int maxResumes = 2;
    private Duration backoff = Duration.ofMillis(200);
    private Duration maxBackoff = Duration.ofSeconds(5);
    private int maxEventBytes = ServerSentEvents.DEFAULT_MAX_EVENT_BYTES;
    private Supplier<Scheduler> scheduler;
    private MeterRegistry meterRegistry = Metrics.globalRegistry;

    private Builder(String baseUrl, Dialect dialect) {
      this.baseUrl = Objects.requireNonNull(baseUrl, "baseUrl");
      this.dialect = Objects.requireNonNull(dialect, "dialect");
      this.path = dialect.defaultPath();
    }

    /** The request path (default: the dialect's, e.g. {@code /v1/chat/completions}). */
    public Builder path(String path) {
      this.path = Objects.requireNonNull(path, "path");
      return this;
    }

    /** A header sent with every request (e.g. {@code Authorization}, {@code anthropic-version}). */
    public Builder header(String name, String value) {
      headers.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
      return this;
    }

    /** The Reactor Netty client to start from (pool, TLS, proxy); its retry is disabled regardless. */
    public Builder httpClient(HttpClient httpClient) {
      this.httpClient = Objects.requireNonNull(httpClient, "httpClient");
      return this;
    }

    /** The Jackson mapper for requests and chunks. */
    public Builder objectMapper(ObjectMapper mapper) {
      this.mapper = Objects.requireNonNull(mapper, "mapper");
      return this;
    }

    /** The stream's timeouts (default: first item and idle from the deadline). */
    public Builder timeouts(StreamTimeouts timeouts) {
      this.timeouts = Objects.requireNonNull(timeouts, "timeouts");
      return this;
    }

    /** Retries before the first chunk (default 2). */
    public Builder maxRetries(int maxRetries) {
      this.maxRetries = maxRetries;
      return this;
    }

    /** Resumes after the first chunk, where the server gives event ids (default 2). */
    public Builder maxResumes(int maxResumes) {
      this.maxResumes = maxResumes;
      return this;
    }

    /** Backoff between attempts without {@code Retry-After}: {@code base × 2^(n-1)}, capped (200 ms, 5 s). */
    public Builder backoff(Duration base, Duration cap) {
      this.backoff = Objects.requireNonNull(base, "base");
      this.maxBackoff = Objects.requireNonNull(cap, "cap");
      return this;
    }

    /** The largest SSE line or event accepted (default 8 MiB). */
    public Builder maxEventBytes(int maxEventBytes) {
      this.maxEventBytes = maxEventBytes;
      return this;
    }

    /** Where backoff time comes from (default: the deadline's scheduler, else {@code Schedulers.parallel()}). */
    public Builder scheduler(Supplier<Scheduler> scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * Where {@code breakwater.stream.retries}, {@code breakwater.stream.resumes} and
     * {@code breakwater.stream.truncations} are counted, tagged {@code dialect} and {@code kind} (default
     * {@code Metrics.globalRegistry}).
     */
    public Builder meterRegistry(MeterRegistry meterRegistry) {
      this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
      return this;
    }

    public LlmStreamClient build() {
      if (!baseUrl.startsWith("http://") && !baseUrl.startsWith("https://")) {
        throw new IllegalArgumentException("baseUrl '" + baseUrl + "' is not an http(s) URL: give e.g. "
            + "http://127.0.0.1:8000");
      }
      if (maxRetries < 0 || maxResumes < 0) {
        throw new IllegalArgumentException("maxRetries " + maxRetries + " / maxResumes " + maxResumes
            + ": give 0 or more");
      }
      if (backoff.isNegative() || maxBackoff.compareTo(backoff) < 0) {
        throw new IllegalArgumentException("backoff " + backoff + " capped at " + maxBackoff
            + ": give a non-negative base and a cap at least as large");
      }
      ServerSentEvents.builder().maxEventBytes(maxEventBytes).build(); // validates the limit
      return new LlmStreamClient(this);
    }
  }
}
