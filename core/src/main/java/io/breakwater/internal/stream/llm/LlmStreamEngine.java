package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.hedge.HedgePolicy;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.JsonLines;
import io.breakwater.stream.ServerSentEvents;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.LlmCallEvent;
import io.breakwater.stream.llm.LlmDelta;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;

/**
 * The immutable configuration of an {@code LlmStreamClient} and the entry to its calls: each subscription runs its
 * own {@link LlmCall}.
 */
public final class LlmStreamEngine {

  final Dialect dialect;
  final String source;
  final String dialectTag;
  final ObjectMapper mapper;
  final Transport transport;
  final ServerSentEvents sse;
  final JsonLines ndjson;
  /** The first-token budget of the whole call, or {@code null}. */
  @Nullable final StreamTimeouts callTimeouts;
  /** The timeouts of an attempt before content: idle from its first content on. */
  @Nullable final StreamTimeouts attemptTimeouts;
  /** The timeouts of a resumed attempt: idle from its start. */
  @Nullable final StreamTimeouts resumeTimeouts;
  final RetryPolicy retry;
  @Nullable final CircuitBreaker breaker;
  /** Backup attempts for a call with no content by the hedge delay, or {@code null}. */
  @Nullable final HedgePolicy hedge;
  final Duration maxDuration;
  final long maxResponseBytes;
  final boolean rawEvents;
  @Nullable final Supplier<Scheduler> scheduler;
  final MeterRegistry meterRegistry;
  @Nullable final Consumer<LlmCallEvent> listener;
  final DeadlineSpec maxDurationSpec;
  final SecretMask secrets;

  /** The settings of an engine; the builder of {@code LlmStreamClient} fills one. */
  public static final class Settings {
    public @Nullable Dialect dialect;
    public @Nullable ObjectMapper mapper;
    public @Nullable Transport transport;
    /** The headers sent with every request: credentials among them are masked where a server echoes them. */
    public Map<String, String> headers = Map.of();
    public int maxEventBytes;
    public @Nullable StreamTimeouts timeouts;
    public @Nullable RetryPolicy retry;
    @Nullable public CircuitBreaker breaker;
    public @Nullable HedgePolicy hedge;
    public @Nullable Duration maxDuration;
    public long maxResponseBytes;
    public boolean rawEvents;
    @Nullable public Supplier<Scheduler> scheduler;
    public @Nullable MeterRegistry meterRegistry;
    @Nullable public Consumer<LlmCallEvent> listener;
  }

  public LlmStreamEngine(Settings s) {
    Dialect dialect = Objects.requireNonNull(s.dialect, "dialect");
    ObjectMapper mapper = Objects.requireNonNull(s.mapper, "mapper");
    Transport transport = Objects.requireNonNull(s.transport, "transport");
    StreamTimeouts t = Objects.requireNonNull(s.timeouts, "timeouts");
    RetryPolicy retry = Objects.requireNonNull(s.retry, "retry");
    Duration maxDuration = Objects.requireNonNull(s.maxDuration, "maxDuration");
    MeterRegistry meterRegistry = Objects.requireNonNull(s.meterRegistry, "meterRegistry");
    this.dialect = dialect;
    this.dialectTag = dialect.name().toLowerCase(Locale.ROOT);
    this.source = "llm:" + dialectTag;
    this.mapper = mapper;
    this.transport = transport;
    this.sse = ServerSentEvents.builder().comments(true).maxEventBytes(s.maxEventBytes).build();
    this.ndjson = JsonLines.builder().maxLineBytes(s.maxEventBytes).build();
    boolean first = t.firstItemFromDeadline() || t.firstItem() != null;
    boolean idle = t.idleFromDeadline() || t.idle() != null;
    this.callTimeouts = first ? firstItem(t, meterRegistry).build() : null;
    // An attempt before content needs a first-item timeout only so that its idle clock starts at its first content:
    // one longer than the call can last, so that it never fires (the call's first-token budget does).
    Duration never = maxDuration.multipliedBy(2);
    this.attemptTimeouts = idle
        ? idle(first ? base(t, meterRegistry).firstItem(never) : base(t, meterRegistry), t).build() : null;
    this.resumeTimeouts = idle ? idle(base(t, meterRegistry), t).build() : null;
    this.retry = retry;
    this.breaker = s.breaker;
    this.hedge = s.hedge;
    this.maxDuration = maxDuration;
    this.maxResponseBytes = s.maxResponseBytes;
    this.rawEvents = s.rawEvents;
    this.scheduler = s.scheduler;
    this.meterRegistry = meterRegistry;
    this.listener = s.listener;
    DeadlineSpec.Builder spec = DeadlineSpec.builder(maxDuration).name(source + " maxDuration");
    if (s.scheduler != null) {
      spec.scheduler(s.scheduler);
    }
    this.maxDurationSpec = spec.build();
    this.secrets = new SecretMask(s.headers);
  }

  /** Streams the response to {@code body}; each subscription is one call. */
  public Flux<LlmDelta> stream(byte[] body) {
    return Flux.deferContextual(ctx -> new LlmCall(this, body, ctx).run());
  }

  private static StreamTimeouts.Builder base(StreamTimeouts t, MeterRegistry registry) {
    StreamTimeouts.Builder b = StreamTimeouts.builder().meterRegistry(registry);
    if (t.scheduler() != null) {
      b.scheduler(t.scheduler());
    }
    return b;
  }

  private static StreamTimeouts.Builder firstItem(StreamTimeouts t, MeterRegistry registry) {
    StreamTimeouts.Builder b = base(t, registry);
    return t.firstItemFromDeadline() ? b.firstItemFromDeadline()
        : b.firstItem(Objects.requireNonNull(t.firstItem(), "called with a first-item timeout"));
  }

  private static StreamTimeouts.Builder idle(StreamTimeouts.Builder b, StreamTimeouts t) {
    return t.idleFromDeadline() ? b.idleFromDeadline()
        : b.idle(Objects.requireNonNull(t.idle(), "called with an idle timeout"));
  }
}
