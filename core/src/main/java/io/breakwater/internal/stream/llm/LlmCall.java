package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import io.breakwater.Breakwater;
import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.failure.Retryability;
import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.Saturating;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.StreamResume;
import io.breakwater.stream.EventTooLargeException;
import io.breakwater.stream.ServerSentEvent;
import io.breakwater.stream.StreamTruncatedByTimeoutException;
import io.breakwater.stream.StreamTruncatedException;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.FinishReason;
import io.breakwater.stream.llm.LlmCallEvent;
import io.breakwater.stream.llm.LlmDelta;
import io.breakwater.stream.llm.LlmIncompleteException;
import io.breakwater.stream.llm.LlmResponse;
import io.breakwater.stream.llm.LlmStreamException;
import io.netty.buffer.ByteBuf;
import java.math.BigInteger;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.publisher.SynchronousSink;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.ContextView;

/**
 * One call of an {@code LlmStreamClient}: its attempts, run by {@code retryWithBudget} (retries before the first
 * content, resumes after it where the server allows), and what the caller receives.
 *
 * <ul>
 *   <li>Each attempt decodes events into {@link Item.Batch}es, one per event, holding framing back until the first
 *       content (so a retried attempt never repeats it), and times itself with the idle budget on content.</li>
 *   <li>A failure before content goes to the retry. After content, one that can be resumed goes to it too; any other
 *       becomes its final error ({@link Item.Final}) and passes the retry as an item.</li>
 *   <li>After the retry, {@link #deliver} is where content counts as delivered: it moves the resume position,
 *       assembles the partial response, bounds its size and turns the terminal event into {@link LlmDelta.Done} or
 *       an {@link LlmIncompleteException}. The first-token budget then bounds the whole call, and the maximum
 *       duration runs as a deadline (so each attempt sends what remains of it).</li>
 * </ul>
 *
 * <p>Each attempt decodes into its own {@link Run}, so that hedged attempts (the client's {@code hedge} policy: a
 * backup attempt for a call with no content by the hedge delay) never share decoding state. Before the first content
 * is delivered a primary attempt and its hedges may run at once, so the few fields they share (the attempt count, the
 * last failure's kind, the parsed request) are safe to touch from two threads; everything after the hedge operator
 * ({@link #deliver}, what the caller receives) sees one attempt's items at a time, in order. A retry or resume starts
 * only after the attempts before it have ended.
 */
final class LlmCall {

  private static final Logger LOG = LoggerFactory.getLogger(LlmCall.class);
  /** Framing held back before the first content, at most (a server that sends only framing is cut off here). */
  private static final int MAX_HELD_BACK = 1024;
  /** The longest {@code Last-Event-ID} sent back. */
  static final int MAX_EVENT_ID_CHARS = 256;

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

  private static final AtomicIntegerFieldUpdater<LlmCall> REPORTED =
      AtomicIntegerFieldUpdater.newUpdater(LlmCall.class, "reported");
  private static final AtomicIntegerFieldUpdater<LlmCall> ATTEMPTS =
      AtomicIntegerFieldUpdater.newUpdater(LlmCall.class, "attempts");

  private final LlmStreamEngine engine;
  private final byte[] body;
  // read and written only through REPORTED, which Error Prone's UnusedVariable does not follow
  @SuppressWarnings("UnusedVariable")
  private volatile int reported;
  private final ContextView context;
  private final Scheduler clock;
  private final long startNanos;
  private final ResponseAssembler assembler;
  /** The request as JSON, parsed on the failure path only, to mask echoed values of its sensitive fields. */
  @Nullable private volatile JsonNode requestJson;

  // across attempts; hedges of one attempt may touch the first three at once
  /** Requests sent, hedges included; read and written through {@link #ATTEMPTS}. */
  private volatile int attempts;
  private volatile FailureKind lastFailureKind = FailureKind.UNKNOWN;
  /**
   * The decoder of the attempt whose content the caller receives ({@code null} before the first content): a resume
   * continues it, and only an attempt decoding with it delivers the call's content, so a hedge that lost never speaks
   * for the call.
   */
  @Nullable private volatile DialectDecoder delivering;
  private int resumes;
  private long positions;
  private long contentDeltas;
  private long firstContentNanos = -1;
  private String lastEventId = "";
  private long lastSequence = -1;
  @Nullable private Throwable cutBy;
  @Nullable private Throwable finalized;

  LlmCall(LlmStreamEngine engine, byte[] body, ContextView context) {
    this.engine = engine;
    this.body = body;
    this.context = context;
    Deadline outer = context.getOrDefault(ContextKeys.DEADLINE, null);
    this.clock = engine.scheduler != null ? engine.scheduler.get()
        : outer != null ? outer.scheduler() : Schedulers.parallel();
    this.startNanos = clock.now(TimeUnit.NANOSECONDS);
    this.assembler = new ResponseAssembler(engine.mapper);
  }

  Flux<LlmDelta> run() {
    Flux<Item> once = Flux.defer(() -> attempt(false));
    Flux<Item> attempts = once;
    if (engine.hedge != null) {
      // hedged until content is delivered: a resume continues one answer and is never raced by another
      Flux<Item> hedged = once.transform(Breakwater.hedgedBy(engine.hedge, Item::isProgress,
          List.of(() -> Flux.defer(() -> attempt(true)))));
      attempts = Flux.defer(() -> contentDelivered() ? once : hedged);
    }
    Flux<Item.Batch> batches = attempts
        .transform(Breakwater.retryWithBudget(engine.retry, StreamResume.<Item>bySequence(item -> ++positions)))
        .handle(this::deliver);
    if (engine.callTimeouts != null) {
      batches = batches.transform(Breakwater.streamTimeouts(engine.callTimeouts, Item::isProgress));
    }
    Flux<LlmDelta> deltas = batches
        .transform(Breakwater.withDeadline(maxDurationSpec()))
        .onErrorMap(this::finalError)
        .concatMapIterable(Item.Batch::deltas);
    // reported before the subscriber sees the end, so that whoever waits for the stream also sees its event
    Consumer<LlmCallEvent> listener = engine.listener;
    return listener == null ? deltas : deltas
        .doOnComplete(() -> report(SignalType.ON_COMPLETE, listener))
        .doOnError(e -> report(SignalType.ON_ERROR, listener))
        .doOnCancel(() -> report(SignalType.CANCEL, listener));
  }

  /** The maximum duration, deriving its budgets as the caller's deadline does (it applies only if tighter). */
  private DeadlineSpec maxDurationSpec() {
    Deadline outer = context.getOrDefault(ContextKeys.DEADLINE, null);
    if (outer == null || outer.remainingNanos() <= Saturating.nanos(engine.maxDuration)) {
      return engine.maxDurationSpec;
    }
    DeadlineSpec caller = outer.spec();
    Scheduler scheduler = clock;
    return DeadlineSpec.builder(engine.maxDuration).name(engine.maxDurationSpec.name())
        .scheduler(() -> scheduler)
        .perCallFraction(caller.perCallFraction()).perCallCap(caller.perCallCap())
        .idleFraction(caller.idleFraction()).idleCap(caller.idleCap())
        .build();
  }

  /** Whether content reached the caller: from then on the call is resumed, never retried or hedged. */
  private boolean contentDelivered() {
    return delivering != null;
  }

  // ---- one attempt ----

  /** One request: the first, a retry or a resume, or (when {@code hedge}) a backup for the attempt in flight. */
  private Flux<Item> attempt(boolean hedge) {
    int number = ATTEMPTS.incrementAndGet(this);
    // a hedge always starts afresh: one due just as the attempt it backs up delivered its first content must not
    // continue (and decode with) that attempt's decoder; the hedge operator cancels it as the race is already won
    boolean resume = !hedge && contentDelivered();
    if (number > 1 && !hedge) {
      count(resume ? "breakwater.stream.resumes" : "breakwater.stream.retries", lastFailureKind);
      resumes += resume ? 1 : 0;
    }
    Run run;
    Attempt request;
    if (!resume) {
      run = new Run(DialectDecoder.of(engine.dialect, engine.mapper, engine.source, this::mask), false);
      request = new Attempt(number, body, null, null, -1);
    } else {
      run = new Run(Objects.requireNonNull(delivering, "content was delivered by an attempt"), true);
      if (engine.dialect == Dialect.OPENAI_RESPONSES) {
        run.resumeFromSequence = lastSequence;
        request = new Attempt(number, body, null, run.decoder.responseId(), lastSequence);
      } else {
        run.resumeFromId = lastEventId;
        request = new Attempt(number, body, lastEventId, null, -1);
      }
    }
    Flux<ByteBuf> bytes = engine.transport.open(request).onErrorMap(HttpStatusException.class, this::masked);
    if (engine.dialect == Dialect.GEMINI) {
      bytes = GeminiDecoder.eventStreamOnly(bytes, engine.source);
    }
    Flux<Item> items = (engine.dialect.isNdjson()
        ? engine.ndjson.lines(bytes).<Item>handle(run::onLine)
        : engine.sse.events(bytes).<Item>handle(run::onEvent))
        .concatWith(Mono.defer(run::endOfBody));
    if (engine.attemptTimeouts != null) {
      items = items.transform(Breakwater.streamTimeouts(
          Objects.requireNonNull(resume ? engine.resumeTimeouts : engine.attemptTimeouts, "both or neither"),
          Item::isProgress));
    }
    // after the terminal event the response may end by itself (keeping the connection reusable); a server that
    // then stalls or drops is no failure
    items = items.onErrorResume(e -> run.terminalSeen ? Flux.empty() : Flux.error(e));
    if (engine.breaker != null) {
      items = items.transform(Breakwater.guardedBy(engine.breaker));
    }
    return items.onErrorResume(e -> afterFailure(run, e));
  }

  /** The decoding state of one attempt, and where its decoder reports. */
  private final class Run implements DialectDecoder.Out {
    final DialectDecoder decoder;
    /** A resume: its content continues content already delivered, so nothing is held back. */
    final boolean resume;
    boolean attemptContent;
    boolean terminalSeen;
    @Nullable String resumeFromId;
    long resumeFromSequence = -1;
    @Nullable List<LlmDelta> heldBack;

    // within an event
    @Nullable List<LlmDelta> current;
    boolean terminalEvent;
    long eventSequence = -1;
    @Nullable LlmStreamException failed;

    Run(DialectDecoder decoder, boolean resume) {
      this.decoder = decoder;
      this.resume = resume;
    }

    private void onEvent(ServerSentEvent event, SynchronousSink<Item> sink) {
      if (terminalSeen || event.isHeartbeat() || resumeFromId != null && isDuplicate(resumeFromId, event.id())) {
        return;
      }
      decode(event.event(), event.data(), event.id(), sink);
    }

    private void onLine(String line, SynchronousSink<Item> sink) {
      if (!terminalSeen) {
        decode("message", line, null, sink);
      }
    }

    private void decode(String type, String data, @Nullable String id, SynchronousSink<Item> sink) {
      current = null;
      terminalEvent = false;
      eventSequence = -1;
      decoder.decode(type, data, this);
      Item.Batch batch = collect(id);
      if (batch != null) {
        sink.next(batch);
      }
      if (failed != null) {
        LlmStreamException error = failed;
        failed = null;
        sink.error(error);
      }
    }

    /** The batch of the event just decoded; before the first content, framing is held back instead. */
    private Item.@Nullable Batch collect(@Nullable String id) {
      List<LlmDelta> deltas = current;
      current = null;
      boolean content = false;
      if (deltas != null) {
        for (int i = 0; i < deltas.size() && !content; i++) {
          content = deltas.get(i).isContent();
        }
      }
      if (terminalEvent) {
        terminalSeen = true;
      }
      if (!resume && !attemptContent && !content && !terminalEvent) {
        if (deltas != null) {
          holdBack(deltas);
        }
        return null;
      }
      if (heldBack != null) {
        if (deltas != null) {
          heldBack.addAll(deltas);
        }
        deltas = heldBack;
        heldBack = null;
      }
      attemptContent |= content;
      if (deltas == null && !terminalEvent) {
        return null;
      }
      return new Item.Batch(deltas == null ? new ArrayList<>(1) : deltas, content, terminalEvent, id, eventSequence,
          decoder);
    }

    private void holdBack(List<LlmDelta> deltas) {
      if (heldBack == null) {
        heldBack = new ArrayList<>(Math.max(4, deltas.size()));
      }
      heldBack.addAll(deltas);
      if (heldBack.size() > MAX_HELD_BACK) {
        heldBack = null;
        throw new EventTooLargeException(MAX_HELD_BACK, engine.source, "More than " + MAX_HELD_BACK
            + " framing deltas before the first content: the server sends framing without an answer");
      }
    }

    private Mono<Item> endOfBody() {
      if (terminalSeen) {
        return Mono.empty();
      }
      if (decoder.endIsTerminal()) {
        terminalEvent = true;
        return Mono.justOrEmpty(collect(null));
      }
      return Mono.error(new PrematureEndException());
    }

    // ---- DialectDecoder.Out ----

    @Override
    public void delta(LlmDelta delta) {
      if (current == null) {
        current = new ArrayList<>(2);
      }
      current.add(delta);
    }

    @Override
    public void terminal() {
      terminalEvent = true;
    }

    @Override
    public void fail(LlmStreamException error) {
      failed = error;
    }

    @Override
    public void raw(String type, JsonNode json) {
      if (engine.rawEvents) {
        String name = type.equals(ServerSentEvent.DEFAULT_TYPE) && json.path("type").isTextual()
            ? json.path("type").asText() : type;
        delta(new LlmDelta.Event(name, json));
      }
    }

    @Override
    public boolean sequence(long number) {
      if (resumeFromSequence >= 0 && number <= resumeFromSequence) {
        return false;
      }
      eventSequence = number;
      return true;
    }
  }

  /**
   * Before content: the retry decides (or, for a hedged attempt, the hedge: another attempt may still answer). After:
   * resumed where possible, else the stream ends in its final error. Only the attempt whose content the caller
   * receives gets that far: a hedge that lost the race fails as an attempt, and the hedge drops it.
   */
  private Flux<Item> afterFailure(Run run, Throwable error) {
    lastFailureKind = engine.retry.classifier().classify(error);
    if (delivering != run.decoder) {
      return Flux.error(error);
    }
    if (resumable(run.decoder, error)) {
      if (cutBy == null) {
        cutBy = error;
      }
      return Flux.error(error);
    }
    return Flux.just(new Item.Final(finalError(error)));
  }

  private boolean resumable(DialectDecoder decoder, Throwable error) {
    if (error instanceof LlmStreamException || lastFailureKind.retryability() != Retryability.RETRYABLE) {
      return false;   // the server reported the generation failed, or the same attempt would fail again
    }
    return switch (engine.dialect) {
      case OPENAI_RESPONSES -> decoder.canResume() && lastSequence >= 0;
      case OPENAI_CHAT, ANTHROPIC_MESSAGES -> isPrintable(lastEventId);
      case GEMINI, OLLAMA -> false;
    };
  }

  /** A {@code Last-Event-ID} is sent back only when it is printable ASCII and at most 256 characters. */
  static boolean isPrintable(String id) {
    if (id.isEmpty() || id.length() > MAX_EVENT_ID_CHARS) {
      return false;
    }
    for (int i = 0; i < id.length(); i++) {
      char c = id.charAt(i);
      if (c < 0x20 || c > 0x7e) {
        return false;
      }
    }
    return true;
  }

  /**
   * After a resume, events already processed are dropped: numeric ids (decimal digits, of any length) up to the one
   * resumed from, or the event carrying exactly that id. A signed id ({@code -7}, {@code +1}) is text, not a count.
   */
  private static boolean isDuplicate(String resumeFrom, String id) {
    if (id.isEmpty()) {
      return false;
    }
    if (isDigits(id) && isDigits(resumeFrom)) {
      // compared as numbers of any length, not as longs: an id beyond a long must not fall back to equality
      return new BigInteger(id).compareTo(new BigInteger(resumeFrom)) <= 0;
    }
    return id.equals(resumeFrom);
  }

  private static boolean isDigits(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) < '0' || s.charAt(i) > '9') {
        return false;
      }
    }
    return !s.isEmpty();
  }

  /** Server text with the client's secrets masked. */
  private String mask(String text) {
    JsonNode request = requestJson;
    if (request == null) {
      // two hedged attempts failing at once may both parse it: the same value either way
      try {
        request = engine.mapper.readTree(body);
      } catch (java.io.IOException | RuntimeException notJson) {
        request = engine.mapper.createObjectNode();
      }
      requestJson = request;
    }
    return engine.secrets.mask(text, request);
  }

  /** An error status whose excerpt echoes a secret, with it masked (the same exception when it does not). */
  private Throwable masked(HttpStatusException error) {
    String message = Objects.requireNonNull(error.getMessage(), "an HttpStatusException always has a message");
    String masked = mask(message);
    if (masked.equals(message)) {
      return error;
    }
    String prefix = "HTTP " + error.status() + ": ";
    return new HttpStatusException(error.status(), error.headers(),
        masked.startsWith(prefix) ? masked.substring(prefix.length()) : masked);
  }

  // ---- what the caller receives ----

  private void deliver(Item item, SynchronousSink<Item.Batch> sink) {
    if (item instanceof Item.Final f) {
      finalized = f.error();
      sink.error(f.error());
      return;
    }
    Item.Batch batch = (Item.Batch) item;
    if (batch.eventId() != null) {
      lastEventId = batch.eventId();
    }
    if (batch.sequence() > lastSequence) {
      lastSequence = batch.sequence();
    }
    List<LlmDelta> deltas = batch.deltas();
    for (int i = 0; i < deltas.size(); i++) {
      LlmDelta delta = deltas.get(i);
      assembler.accept(delta);
      if (delta.isContent()) {
        contentDeltas++;
      }
    }
    if (batch.content() && !contentDelivered()) {
      delivering = batch.decoder();
      firstContentNanos = clock.now(TimeUnit.NANOSECONDS);
    }
    if (assembler.exceeds(engine.maxResponseBytes)) {
      finalized = truncation(new EventTooLargeException((int) Math.min(Integer.MAX_VALUE, engine.maxResponseBytes),
          engine.source, "The response's output exceeds " + engine.maxResponseBytes + " bytes ("
          + assembler.outputBytes() + " bytes in " + assembler.entries() + " choices, tool calls, citations and other entries): raise "
          + "LlmStreamClient.builder(..).maxResponseBytes(n) if such answers are expected"), null);
      sink.error(finalized);
      return;
    }
    if (!batch.terminal()) {
      sink.next(batch);
      return;
    }
    assembler.completed(attempts);
    if (assembler.isIncomplete()) {
      finalized = new LlmIncompleteException(engine.source, assembler.build());
      sink.next(batch);
      sink.error(finalized);
      return;
    }
    deltas.add(new LlmDelta.Done(attempts));
    sink.next(batch);
  }

  /** The error the caller receives: typed, with what was delivered attached. */
  private Throwable finalError(Throwable error) {
    if (error == finalized) {
      return error;
    }
    Throwable last = error instanceof RetryExhaustedException && error.getCause() != null ? error.getCause() : error;
    if (last instanceof LlmStreamException server) {
      if (contentDelivered()) {
        count("breakwater.stream.truncations", server.failureKind());
      }
      finalized = server.withPartialResponse(partialResponse(), error == last ? null : error);
      return finalized;
    }
    if (!contentDelivered()) {
      finalized = error;
      return error;
    }
    finalized = truncation(cutBy != null ? cutBy : last,
        error instanceof RetryExhaustedException || error instanceof DeadlineExceededException ? error : null);
    return finalized;
  }

  /**
   * The truncation for a stream cut by {@code cut}; its cause is {@code exhausted} (the resumes that were tried, or the
   * deadline that left no time for one: then it is a truncation by timeout), else {@code cut} itself (none for a
   * stream that simply ended early).
   */
  private Throwable truncation(Throwable cut, @Nullable Throwable exhausted) {
    FailureKind kind = cut instanceof PrematureEndException ? FailureKind.CONNECTION
        : engine.retry.classifier().classify(cut);
    count("breakwater.stream.truncations", kind);
    Throwable cause = exhausted != null ? exhausted : cut instanceof PrematureEndException ? null : cut;
    LlmResponse partial = partialResponse();
    String output = PartialOutput.of(partial);
    if (cut instanceof TimeoutException || exhausted instanceof DeadlineExceededException) {
      return new StreamTruncatedByTimeoutException(engine.source, output, contentDeltas, partial,
          cause != null ? cause : cut);
    }
    return new StreamTruncatedException(engine.source, output, contentDeltas, partial, kind, cause);
  }

  private LlmResponse partialResponse() {
    assembler.attempts(attempts);
    return assembler.build();
  }

  /** Failure paths only: a registry lookup per event is fine there. */
  private void count(String name, FailureKind kind) {
    engine.meterRegistry.counter(name, "dialect", engine.dialectTag, "kind", kind.tag()).increment();
  }

  private void report(SignalType signal, Consumer<LlmCallEvent> listener) {
    if (REPORTED.getAndSet(this, 1) != 0) {
      return;   // a cancel racing the end reports once
    }
    long now = clock.now(TimeUnit.NANOSECONDS);
    Throwable error = finalized;
    LlmCallEvent.Outcome outcome = signal == SignalType.CANCEL ? LlmCallEvent.Outcome.CANCELLED
        : signal == SignalType.ON_COMPLETE ? LlmCallEvent.Outcome.COMPLETED
        : error instanceof LlmIncompleteException ? LlmCallEvent.Outcome.INCOMPLETE
        : LlmCallEvent.Outcome.FAILED;
    FailureKind kind = outcome == LlmCallEvent.Outcome.FAILED || outcome == LlmCallEvent.Outcome.INCOMPLETE
        ? (error != null ? engine.retry.classifier().classify(error) : lastFailureKind) : null;
    LlmResponse response = signal == SignalType.CANCEL ? null : assembler.build();
    LlmCallEvent event = new LlmCallEvent(engine.source, outcome, attempts, resumes,
        firstContentNanos < 0 ? null : Duration.ofNanos(firstContentNanos - startNanos),
        Duration.ofNanos(Math.max(0, now - startNanos)),
        response == null ? FinishReason.NONE : response.finishReason(), response == null ? null : response.usage(),
        kind);
    try {
      listener.accept(event);
    } catch (RuntimeException e) {
      LOG.warn("LLM call listener failed with {}", e.getClass().getName());
    }
  }
}
