package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.Breakwater;
import io.breakwater.deadline.Deadline;
import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.failure.Retryability;
import io.breakwater.internal.ContextKeys;
import io.breakwater.stream.ServerSentEvent;
import io.breakwater.stream.ServerSentEvents;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.StreamTruncatedException;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.LlmChunk;
import io.breakwater.stream.llm.LlmStreamException;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.buffer.Unpooled;
import java.net.SocketException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.ByteBufFlux;
import reactor.netty.Connection;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientResponse;
import reactor.util.annotation.Nullable;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * Runs streamed LLM calls: one HTTP attempt at a time, retried only before the first content chunk, resumed with
 * {@code Last-Event-ID} after it where the server gives ids, and otherwise failed with the partial output attached.
 * Immutable; each subscription gets its own {@link Session}.
 */
public final class LlmStreamEngine {

  /** The connection ended without the dialect's terminal event. A {@link SocketException}, so CONNECTION. */
  static final class PrematureEndException extends SocketException {
    private static final long serialVersionUID = 1L;

    PrematureEndException() {
      super("Stream ended without its terminal event");
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }

  /** The state of one subscription, across its attempts. Touched serially: by one attempt at a time. */
  static final class Session {
    String lastId = "";
    /** OpenAI Responses: the response's id and the last sequence number processed, for {@code starting_after}. */
    String responseId;
    long lastSequence = -1;
    long delivered;
    final StringBuilder partial = new StringBuilder();
    int retries;
    int resumes;
    boolean resuming;
  }

  private final HttpClient http;
  private final String path;
  private final DialectDecoder dialect;
  private final ServerSentEvents decoder;
  private final StreamTimeouts timeouts;
  private final int maxRetries;
  private final int maxResumes;
  private final Duration backoff;
  private final Duration maxBackoff;
  @Nullable private final Supplier<Scheduler> scheduler;
  private final MeterRegistry meterRegistry;
  private final String dialectTag;
  private final FailureClassifier classifier = FailureClassifier.defaults();

  /** Context key under which an attempt receives its connection, to close it when the attempt is cancelled. */
  private static final Object CONNECTION = new Object();

  public LlmStreamEngine(HttpClient http, String path, Dialect dialect,
      ObjectMapper mapper, ServerSentEvents decoder, StreamTimeouts timeouts,
      int maxRetries, int maxResumes, Duration backoff, Duration maxBackoff, @Nullable Supplier<Scheduler> scheduler,
      MeterRegistry meterRegistry) {
    this.meterRegistry = meterRegistry;
    this.dialectTag = dialect.name().toLowerCase(Locale.ROOT);
    // Remember each attempt's connection: cancelling an attempt must close it, also before the response arrives,
    // so that no request is left running on the server and no half-read connection goes back to the pool.
    this.http = http.doOnRequest((request, connection) -> request.currentContextView()
        .<AtomicReference<Connection>>getOrEmpty(CONNECTION).ifPresent(ref -> ref.set(connection)));
    this.path = path;
    this.dialect = new DialectDecoder(dialect, mapper);
    this.decoder = decoder;
    this.timeouts = timeouts;
    this.maxRetries = maxRetries;
    this.maxResumes = maxResumes;
    this.backoff = backoff;
    this.maxBackoff = maxBackoff;
    this.scheduler = scheduler;
  }

  /** Streams the response to {@code body} (JSON with {@code "stream": true}). */
  public Flux<LlmChunk> stream(byte[] body) {
    return Flux.deferContextual(ctx -> run(new Session(), body, ctx));
  }

  private Flux<LlmChunk> run(Session session, byte[] body, ContextView ctx) {
    return attempt(session, body).onErrorResume(e -> recover(session, body, ctx, e));
  }

  private Flux<LlmChunk> attempt(Session session, byte[] body) {
    return Flux.defer(() -> {
      boolean[] done = new boolean[1];
      AtomicReference<Connection> connection = new AtomicReference<>();
      boolean bySequence = dialect.dialect() == Dialect.OPENAI_RESPONSES;
      long resumeSequence = session.resuming && bySequence ? session.lastSequence : -1;
      String resumeFrom = session.resuming && !bySequence ? session.lastId : "";
      HttpClient client = resumeFrom.isEmpty() ? http : http.headers(h -> h.set("Last-Event-ID", resumeFrom));
      BiFunction<HttpClientResponse, ByteBufFlux, Publisher<ServerSentEvent>> read = (response, content) ->
          response.status().code() >= 400
              ? content.aggregate().asString().defaultIfEmpty("").flatMap(detail ->
                  Mono.<ServerSentEvent>error(new HttpStatusException(response.status().code(), headers(response),
                      DialectDecoder.abbreviate(detail))))
              : decoder.events(content);
      Flux<ServerSentEvent> events = (resumeSequence >= 0
          ? client.get().uri(path + "/" + URLEncoder.encode(session.responseId, StandardCharsets.UTF_8)
              + "?stream=true&starting_after=" + resumeSequence).response(read)
          : client.post().uri(path).send(Mono.fromSupplier(() -> Unpooled.wrappedBuffer(body))).response(read))
          .doOnCancel(() -> {
            Connection c = connection.get();
            if (c != null) {
              c.dispose();
            }
          })
          .contextWrite(Context.of(CONNECTION, connection));
      return events
          .transform(Breakwater.streamTimeouts(timeouts, e -> !e.isHeartbeat()))
          // after the terminal event, let the response end by itself (keeping the connection reusable); a server
          // that then stalls is no failure
          .onErrorResume(e -> done[0] ? Mono.empty() : Mono.error(e))
          .<LlmChunk>handle((event, sink) -> {
            if (done[0] || event.isHeartbeat() || isDuplicate(resumeFrom, event.id())) {
              return;
            }
            DialectDecoder.Step step = dialect.decode(event);
            if (bySequence && isDuplicateSequence(session, resumeSequence, step.json())) {
              return;
            }
            session.lastId = event.id();
            if (step instanceof DialectDecoder.Chunk c) {
              session.delivered++;
              session.partial.append(c.chunk().text());
              sink.next(c.chunk());
            } else if (step instanceof DialectDecoder.Failure f) {
              sink.error(f.error());
            } else if (step instanceof DialectDecoder.Done) {
              done[0] = true;
            }
          })
          .concatWith(Mono.defer(() -> done[0] ? Mono.empty() : Mono.error(new PrematureEndException())));
    });
  }

  /**
   * After a resume, events the client already processed are dropped: numeric ids up to the one resumed from, or
   * the event carrying exactly that id.
   */
  private static boolean isDuplicate(String resumeFrom, String id) {
    if (resumeFrom.isEmpty() || id.isEmpty()) {
      return false;
    }
    try {
      return Long.parseLong(id) <= Long.parseLong(resumeFrom);
    } catch (NumberFormatException notNumeric) {
      return id.equals(resumeFrom);
    }
  }

  /** Responses: tracks the response id and sequence numbers; true for an event already processed before a resume. */
  private static boolean isDuplicateSequence(Session session, long resumeSequence, @Nullable JsonNode json) {
    if (json == null) {
      return false;
    }
    JsonNode sequence = json.get("sequence_number");
    if (sequence != null && sequence.canConvertToLong()) {
      long n = sequence.asLong();
      if (resumeSequence >= 0 && n <= resumeSequence) {
        return true;
      }
      session.lastSequence = Math.max(session.lastSequence, n);
    }
    if (session.responseId == null && json.path("response").hasNonNull("id")) {
      session.responseId = json.path("response").path("id").asText();
    }
    return false;
  }

  private boolean canResume(Session session) {
    return dialect.dialect() == Dialect.OPENAI_RESPONSES
        ? session.responseId != null && session.lastSequence >= 0
        : !session.lastId.isEmpty();
  }

  private Flux<LlmChunk> recover(Session session, byte[] body, ContextView ctx, Throwable error) {
    FailureKind kind = classifier.classify(error);
    boolean retryable = kind.retryability() == Retryability.RETRYABLE;
    Deadline deadline = ctx.getOrDefault(ContextKeys.DEADLINE, null);
    if (session.delivered == 0) {
      if (retryable && session.retries < maxRetries) {
        session.retries++;
        count("breakwater.stream.retries", kind);
        return after(delay(error, session.retries, deadline), deadline, error, session, body, ctx);
      }
      return Flux.error(error);
    }
    boolean resumable = retryable && !(error instanceof LlmStreamException) && canResume(session);
    if (resumable && session.resumes < maxResumes) {
      session.resumes++;
      count("breakwater.stream.resumes", kind);
      session.resuming = true;
      return after(delay(error, session.resumes, deadline), deadline, truncated(session, error), session, body,
          ctx);
    }
    count("breakwater.stream.truncations", kind);
    return Flux.error(truncated(session, error));
  }

  /** Failure paths only: a registry lookup per event is fine there. */
  private void count(String name, FailureKind kind) {
    meterRegistry.counter(name, "dialect", dialectTag, "kind", kind.tag()).increment();
  }

  private StreamTruncatedException truncated(Session session, Throwable error) {
    return new StreamTruncatedException(dialect.source(), session.partial.toString(), session.delivered,
        error instanceof PrematureEndException ? null : error);
  }

  /** Runs the next attempt after {@code delay}, unless the deadline would pass first: then fails with {@code error}. */
  private Flux<LlmChunk> after(Duration delay, @Nullable Deadline deadline, Throwable error, Session session,
      byte[] body, ContextView ctx) {
    if (deadline != null && deadline.remainingNanos() <= delay.toNanos()) {
      return Flux.error(error);
    }
    Scheduler timer = scheduler != null ? scheduler.get()
        : deadline != null ? deadline.scheduler() : Schedulers.parallel();
    return Mono.delay(delay, timer).thenMany(Flux.defer(() -> run(session, body, ctx)));
  }

  /** Retry-After if the server sent one, else exponential backoff: backoff × 2^(n-1), capped. */
  private Duration delay(Throwable error, int attempt, @Nullable Deadline deadline) {
    if (error instanceof HttpStatusException http) {
      Duration retryAfter = http.header("Retry-After").map(v -> retryAfter(v, deadline)).orElse(null);
      if (retryAfter != null) {
        return retryAfter;
      }
    }
    long nanos = backoff.toNanos() << Math.min(20, attempt - 1);
    return Duration.ofNanos(Math.min(nanos, maxBackoff.toNanos()));
  }

  @Nullable
  private Duration retryAfter(String value, @Nullable Deadline deadline) {
    String v = value.trim();
    if (!v.isEmpty() && v.chars().allMatch(Character::isDigit)) {
      return Duration.ofSeconds(Long.parseLong(v.length() > 9 ? "999999999" : v));
    }
    try {
      long at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
      Scheduler clock = scheduler != null ? scheduler.get()
          : deadline != null ? deadline.scheduler() : Schedulers.parallel();
      return Duration.ofMillis(Math.max(0L, at - clock.now(TimeUnit.MILLISECONDS)));
    } catch (DateTimeParseException malformed) {
      return null;
    }
  }

  private static Map<String, List<String>> headers(HttpClientResponse response) {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    for (String name : response.responseHeaders().names()) {
      headers.put(name, new ArrayList<>(response.responseHeaders().getAll(name)));
    }
    return headers;
  }
}
