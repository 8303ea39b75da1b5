package io.breakwater.stream.llm;

import static io.breakwater.stream.llm.LlmTestServer.OPENAI_DONE;
import static io.breakwater.stream.llm.LlmTestServer.drip;
import static io.breakwater.stream.llm.LlmTestServer.openAiToken;
import static io.breakwater.stream.llm.LlmTestServer.sse;
import static io.breakwater.stream.llm.LlmTestServer.sseThenDrop;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.Breakwater;
import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.hedge.HedgePolicy;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.FirstItemTimeoutException;
import io.breakwater.stream.IdleTimeoutException;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.StreamTruncatedByTimeoutException;
import io.breakwater.stream.StreamTruncatedException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.ConnectionPoolMetrics;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.http.client.HttpClient;

/**
 * The client against a real Reactor Netty server on loopback that drips tokens, stalls, sends only heartbeats, drops
 * the connection, delays its first byte, rate-limits and reports errors mid-stream.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LlmStreamClientIT {

  private static final Map<String, Object> REQUEST = Map.of("model", "test",
      "messages", List.of(Map.of("role", "user", "content", "hi")));
  /** For the tests that time a missing first token. */
  private static final StreamTimeouts FAST = StreamTimeouts.builder()
      .firstItem(Duration.ofSeconds(2)).idle(Duration.ofSeconds(1)).build();
  /** For the others: a first token may be slow on a loaded machine, stalls after it are timed. */
  private static final StreamTimeouts RELAXED = StreamTimeouts.builder()
      .firstItem(Duration.ofSeconds(15)).idle(Duration.ofSeconds(1)).build();

  /** Loads the client's and the server's classes once, so that no test's first-token budget pays for it. */
  @BeforeAll
  static void warmUp() {
    try (LlmTestServer warm = new LlmTestServer()) {
      warm.play((n, req, res) -> sse(res, Flux.just(openAiToken("w"), OPENAI_DONE)));
      LlmStreamClient.builder(warm.baseUrl(), Dialect.OPENAI_CHAT).build().stream(REQUEST)
          .blockLast(Duration.ofSeconds(60));
    }
  }

  private final LlmTestServer server = new LlmTestServer();

  @AfterEach
  void stop() {
    server.close();
  }

  private LlmStreamClient.Builder client(Dialect dialect) {
    return client(dialect, 2);
  }

  private LlmStreamClient.Builder client(Dialect dialect, int maxRetries) {
    return LlmStreamClient.builder(server.baseUrl(), dialect).timeouts(RELAXED)
        .retry(RetryPolicy.builder().name("llm-it").maxRetries(maxRetries)
            .backoff(Backoff.fullJitter(Duration.ofMillis(20), Duration.ofMillis(100)))
            .budget(RetryBudget.unlimited()).build());
  }

  /** Runs the stream; returns the chunks, the error (or null) and when (ns) it ended. */
  private static final class Outcome {
    final List<LlmDelta> chunks = new CopyOnWriteArrayList<>();
    final AtomicReference<Throwable> error = new AtomicReference<>();
    final long startNanos = System.nanoTime();
    volatile long endNanos;

    String text() {
      return chunks.stream().filter(LlmDelta.Text.class::isInstance).map(d -> ((LlmDelta.Text) d).text())
          .collect(Collectors.joining());
    }

    Duration took() {
      return Duration.ofNanos(endNanos - startNanos);
    }
  }

  private static Outcome run(Flux<LlmDelta> stream) {
    Outcome outcome = new Outcome();
    stream.doOnNext(outcome.chunks::add)
        .doOnError(outcome.error::set)
        .doOnTerminate(() -> outcome.endNanos = System.nanoTime())
        .onErrorResume(e -> Mono.empty())
        .blockLast(Duration.ofSeconds(20));
    return outcome;
  }

  private void assertServerClosedWithinOneSecondOf(long clientEndNanos) throws InterruptedException {
    for (int i = 0; i < 150 && server.closedAtNanos.isEmpty(); i++) {
      Thread.sleep(10);
    }
    assertThat(server.closedAtNanos).as("the server saw the connection close").isNotEmpty();
    assertThat(server.closedAtNanos.get(0) - clientEndNanos).isLessThan(TimeUnit.SECONDS.toNanos(1));
  }

  @Test
  void drippedTokensArriveInOrderAndDoneEndsTheStream() {
    server.play((n, req, res) -> sse(res, drip(res, 5, Duration.ofMillis(30), Flux.just(OPENAI_DONE))));
    Outcome outcome = run(client(Dialect.OPENAI_CHAT).build().stream(REQUEST));
    assertThat(outcome.error.get()).isNull();
    assertThat(outcome.text()).isEqualTo("t0t1t2t3t4");
    assertThat(outcome.chunks).hasSize(6); // five texts and Done: the role-only delta is not content
    assertThat(outcome.chunks.get(5)).isEqualTo(new LlmDelta.Done(1));
    assertThat(server.requests.get()).isEqualTo(1);
  }

  @Test
  void aStallAfterContentIsAnIdleTimeoutWithThePartialOutputAndClosesTheConnection() throws Exception {
    server.play((n, req, res) -> sse(res, drip(res, 3, Duration.ofMillis(20), Flux.never())));
    Outcome outcome = run(client(Dialect.OPENAI_CHAT).build().stream(REQUEST));
    assertThat(outcome.error.get()).isInstanceOf(StreamTruncatedByTimeoutException.class)
        .isInstanceOf(java.util.concurrent.TimeoutException.class)
        .hasCauseInstanceOf(IdleTimeoutException.class);
    StreamTruncatedByTimeoutException truncated = (StreamTruncatedByTimeoutException) outcome.error.get();
    assertThat(truncated.partialOutput()).isEqualTo("t0t1t2");
    assertThat(LlmResponse.partialOf(truncated).orElseThrow().text()).isEqualTo("t0t1t2");
    assertThat(truncated.failureKind()).isEqualTo(FailureKind.TIMEOUT);
    // idle 1 s, detected by 1.25 s after the last token (+ scheduling slack)
    assertThat(outcome.took()).isBetween(Duration.ofSeconds(1), Duration.ofMillis(2500));
    assertServerClosedWithinOneSecondOf(outcome.endNanos);
    assertThat(server.requests.get()).as("no retry after content without event ids").isEqualTo(1);
  }

  @Test
  void onlyHeartbeatsIsAFirstItemTimeoutAndClosesTheConnection() throws Exception {
    server.play((n, req, res) -> sse(res, LlmTestServer.ticks(res, Duration.ofMillis(50))
        .map(i -> i % 2 == 0 ? ": keep-alive\n\n" : "event: ping\ndata: {}\n\n")));
    Outcome outcome = run(client(Dialect.OPENAI_CHAT, 0).timeouts(FAST).build().stream(REQUEST));
    assertThat(outcome.error.get()).isInstanceOf(FirstItemTimeoutException.class);
    assertThat(outcome.took()).isBetween(Duration.ofSeconds(2), Duration.ofMillis(3500));
    assertThat(FailureClassifier.defaults().classify(outcome.error.get())).isEqualTo(FailureKind.TIMEOUT);
    assertServerClosedWithinOneSecondOf(outcome.endNanos);
  }

  @Test
  void aDelayedFirstByteTripsTheFirstTokenBudgetOfTheWholeCallAndClosesTheConnection() throws Exception {
    server.play((n, req, res) -> Mono.delay(Duration.ofSeconds(6)).then(Mono.from(sse(res,
        drip(res, 2, Duration.ofMillis(10), Flux.just(OPENAI_DONE))))));
    Outcome outcome = run(client(Dialect.OPENAI_CHAT, 1).timeouts(FAST).build().stream(REQUEST));
    assertThat(outcome.error.get()).isInstanceOf(FirstItemTimeoutException.class);
    assertThat(outcome.took()).isBetween(Duration.ofSeconds(2), Duration.ofMillis(3500));
    assertThat(server.requests.get()).as("no retry once the call's first-token budget is spent").isEqualTo(1);
    assertServerClosedWithinOneSecondOf(outcome.endNanos);
  }

  @Test
  void aDroppedConnectionAfterContentFailsWithThePartialOutput() {
    server.play((n, req, res) -> sseThenDrop(res, drip(res, 2, Duration.ofMillis(10), Flux.empty())));
    Outcome outcome = run(client(Dialect.OPENAI_CHAT).build().stream(REQUEST));
    assertThat(outcome.error.get()).isInstanceOf(StreamTruncatedException.class);
    StreamTruncatedException truncated = (StreamTruncatedException) outcome.error.get();
    assertThat(truncated.partialOutput()).isEqualTo("t0t1");
    assertThat(truncated.failureKind()).isEqualTo(FailureKind.CONNECTION);
    assertThat(outcome.took()).isLessThan(Duration.ofSeconds(1)); // the drop, not the idle timeout
  }

  @Test
  void aStreamEndingWithoutItsTerminalEventIsATruncationNotASuccess() {
    server.play((n, req, res) -> sse(res, drip(res, 2, Duration.ofMillis(10), Flux.empty())));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Outcome outcome = run(client(Dialect.OPENAI_CHAT).meterRegistry(registry).build().stream(REQUEST));
    assertThat(registry.get("breakwater.stream.truncations").tag("kind", "connection").counter().count())
        .isEqualTo(1);
    assertThat(outcome.error.get()).isInstanceOf(StreamTruncatedException.class).hasNoCause();
    assertThat(((StreamTruncatedException) outcome.error.get()).partialOutput()).isEqualTo("t0t1");
    assertThat(((StreamTruncatedException) outcome.error.get()).failureKind()).isEqualTo(FailureKind.CONNECTION);
  }

  @Test
  void aDroppedConnectionBeforeContentIsRetried() {
    server.play((n, req, res) -> n == 0
        ? sseThenDrop(res, Flux.just(LlmTestServer.OPENAI_ROLE))
        : sse(res, drip(res, 1, Duration.ofMillis(10), Flux.just(OPENAI_DONE))));
    Outcome outcome = run(client(Dialect.OPENAI_CHAT).build().stream(REQUEST));
    assertThat(outcome.error.get()).isNull();
    assertThat(outcome.text()).isEqualTo("t0");
    assertThat(server.requests.get()).isEqualTo(2);
  }

  @Test
  void status429BeforeTheFirstByteIsRetriedAfterRetryAfter() {
    server.play((n, req, res) -> n == 0
        ? res.status(429).header("Retry-After", "1").sendString(Mono.just("slow down"))
        : sse(res, drip(res, 1, Duration.ofMillis(10), Flux.just(OPENAI_DONE))));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Outcome outcome = run(client(Dialect.OPENAI_CHAT).meterRegistry(registry).build().stream(REQUEST));
    assertThat(outcome.error.get()).isNull();
    assertThat(outcome.text()).isEqualTo("t0");
    assertThat(outcome.took()).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
    assertThat(server.requests.get()).isEqualTo(2);
    assertThat(registry.get("breakwater.stream.retries").tags("dialect", "openai_chat", "kind", "rate_limited")
        .counter().count()).isEqualTo(1);
  }

  @Test
  void status503ExhaustingRetriesIsAClassifiedHttpError() {
    server.play((n, req, res) -> res.status(503).header("Retry-After", "0").sendString(Mono.just("down")));
    Outcome outcome = run(client(Dialect.OPENAI_CHAT, 2).build().stream(REQUEST));
    assertThat(outcome.error.get()).isInstanceOf(RetryExhaustedException.class)
        .hasCauseInstanceOf(HttpStatusException.class);
    HttpStatusException http = (HttpStatusException) outcome.error.get().getCause();
    assertThat(http).hasMessage("HTTP 503: down");
    assertThat(http.header("retry-after")).contains("0");
    assertThat(FailureClassifier.defaults().classify(outcome.error.get())).isEqualTo(FailureKind.SERVER_ERROR);
    assertThat(server.requests.get()).isEqualTo(3);
  }

  @Test
  void status400IsNotRetried() {
    server.play((n, req, res) -> res.status(400).sendString(Mono.just("{\"error\":\"bad\"}")));
    Outcome outcome = run(client(Dialect.OPENAI_CHAT).build().stream(REQUEST));
    assertThat(FailureClassifier.defaults().classify(outcome.error.get())).isEqualTo(FailureKind.INVALID_ARGUMENT);
    assertThat(server.requests.get()).isEqualTo(1);
  }

  @Test
  void anErrorDataEventIsAClassifiedError() {
    server.play((n, req, res) -> sse(res, Flux.just(
        "data: {\"error\":{\"message\":\"Rate limit reached\",\"type\":\"rate_limit_exceeded\"}}\n\n")));
    Outcome outcome = run(client(Dialect.OPENAI_CHAT, 0).build().stream(REQUEST));
    assertThat(outcome.error.get()).isInstanceOf(LlmStreamException.class)
        .hasMessageContaining("Rate limit reached");
    assertThat(((LlmStreamException) outcome.error.get()).failureKind()).isEqualTo(FailureKind.RATE_LIMITED);
  }

  @Test
  void anErrorEventMidStreamFailsWithThePartialResponseAndIsNotResumed() {
    server.play((n, req, res) -> sse(res, Flux.just("id: 1\n" + openAiToken("a"),
        "event: error\ndata: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n")));
    Outcome outcome = run(client(Dialect.OPENAI_CHAT).build().stream(REQUEST));
    assertThat(outcome.error.get()).isInstanceOf(LlmStreamException.class);
    LlmStreamException error = (LlmStreamException) outcome.error.get();
    assertThat(error.failureKind()).isEqualTo(FailureKind.SERVER_ERROR);
    assertThat(error.partialResponse().text()).isEqualTo("a");
    assertThat(server.requests.get()).as("a failed generation is not resumed, even with event ids").isEqualTo(1);
  }

  private static String anthropic(String type, String json) {
    return "event: " + type + "\ndata: " + json + "\n\n";
  }

  private static Flux<String> anthropicStart() {
    return Flux.just(
        anthropic("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\"}}"),
        anthropic("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,"
            + "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}"),
        anthropic("ping", "{\"type\": \"ping\"}"));
  }

  private static String anthropicText(String text) {
    return anthropic("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,"
        + "\"delta\":{\"type\":\"text_delta\",\"text\":\"" + text + "\"}}");
  }

  @Test
  void anthropicMessagesStreamWithPingsEndsAtMessageStop() {
    server.play((n, req, res) -> sse(res, anthropicStart().concatWith(Flux.just(anthropicText("Hel"),
        anthropic("ping", "{\"type\": \"ping\"}"), anthropicText("lo"),
        anthropic("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}"),
        anthropic("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}"),
        anthropic("message_stop", "{\"type\":\"message_stop\"}")))));
    Outcome outcome = run(client(Dialect.ANTHROPIC_MESSAGES).build().stream(REQUEST));
    assertThat(outcome.error.get()).isNull();
    assertThat(outcome.text()).isEqualTo("Hello");
  }

  @Test
  void anthropicOverloadedErrorMidStreamIsAServerErrorWithThePartialOutput() {
    server.play((n, req, res) -> sse(res, anthropicStart().concatWith(Flux.just(anthropicText("Hel"),
        anthropic("error", "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
            + "\"message\":\"Overloaded\"}}")))));
    Outcome outcome = run(client(Dialect.ANTHROPIC_MESSAGES).build().stream(REQUEST));
    LlmStreamException error = (LlmStreamException) outcome.error.get();
    assertThat(error.partialResponse().text()).isEqualTo("Hel");
    assertThat(error.errorType()).isEqualTo("overloaded_error");
    assertThat(error.failureKind()).isEqualTo(FailureKind.SERVER_ERROR);
    assertThat(server.requests.get()).isEqualTo(1);
  }

  @Test
  void anthropicOverloadedBeforeContentIsRetried() {
    server.play((n, req, res) -> n == 0
        ? sse(res, anthropicStart().concatWith(Flux.just(anthropic("error",
            "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"))))
        : sse(res, anthropicStart().concatWith(Flux.just(anthropicText("ok"),
            anthropic("message_stop", "{\"type\":\"message_stop\"}")))));
    Outcome outcome = run(client(Dialect.ANTHROPIC_MESSAGES).build().stream(REQUEST));
    assertThat(outcome.error.get()).isNull();
    assertThat(outcome.text()).isEqualTo("ok");
    assertThat(server.requests.get()).isEqualTo(2);
  }

  @Test
  void aDroppedStreamWithEventIdsIsResumedWithLastEventIdAndDuplicatesAreDropped() {
    server.play((n, req, res) -> n == 0
        ? sseThenDrop(res, Flux.range(1, 3).map(i -> "id: " + i + "\n" + openAiToken("t" + i).substring(0)))
        : sse(res, Flux.range(2, 4).map(i -> "id: " + i + "\n" + openAiToken("t" + i))
            .concatWith(Flux.just(OPENAI_DONE))));
    Outcome outcome = run(client(Dialect.OPENAI_CHAT).build().stream(REQUEST));
    assertThat(outcome.error.get()).isNull();
    assertThat(outcome.text()).isEqualTo("t1t2t3t4t5");
    assertThat(server.lastEventIds).containsExactly("null", "3");
  }

  private static String responsesEvent(int sequence, String type, String fields) {
    return "event: " + type + "\ndata: {\"type\":\"" + type + "\",\"sequence_number\":" + sequence
        + (fields.isEmpty() ? "" : "," + fields) + "}\n\n";
  }

  private static String responsesDelta(int sequence, String text) {
    return responsesEvent(sequence, "response.output_text.delta", "\"delta\":\"" + text + "\"");
  }

  @Test
  void aDroppedResponsesStreamIsResumedStartingAfterTheLastSequenceNumber() {
    server.play((n, req, res) -> n == 0
        ? sseThenDrop(res, Flux.just(
            responsesEvent(0, "response.created", "\"response\":{\"id\":\"resp_42\",\"status\":\"queued\","
                + "\"background\":true}"),
            responsesEvent(1, "response.in_progress", "\"response\":{\"id\":\"resp_42\"}"),
            responsesDelta(2, "Hel"), responsesDelta(3, "lo")))
        : sse(res, Flux.just(   // replayed from before starting_after: the client drops what it already has
            responsesEvent(1, "response.in_progress", "\"response\":{\"id\":\"resp_42\"}"),
            responsesDelta(2, "Hel"), responsesDelta(3, "lo"), responsesDelta(4, " wor"), responsesDelta(5, "ld"),
            responsesEvent(6, "response.completed", "\"response\":{\"id\":\"resp_42\"}"))));
    Outcome outcome = run(client(Dialect.OPENAI_RESPONSES).build().stream(Map.of("model", "test",
        "input", "hi", "background", true)));
    assertThat(outcome.error.get()).isNull();
    assertThat(outcome.text()).isEqualTo("Hello world");
    assertThat(server.requestLines).containsExactly("POST /v1/responses",
        "GET /v1/responses/resp_42?stream=true&starting_after=3");
  }

  @Test
  void aResponsesErrorEventIsClassified() {
    server.play((n, req, res) -> sse(res, Flux.just(
        responsesEvent(0, "error", "\"code\":\"rate_limit_exceeded\",\"message\":\"slow down\""))));
    Outcome outcome = run(client(Dialect.OPENAI_RESPONSES, 0).build().stream(REQUEST));
    assertThat(outcome.error.get()).isInstanceOf(LlmStreamException.class).hasMessageContaining("slow down");
    assertThat(((LlmStreamException) outcome.error.get()).failureKind()).isEqualTo(FailureKind.RATE_LIMITED);
  }

  @Test
  void aPostWhoseConnectionDropsBeforeTheResponseIsNotResentWithRetriesOff() {
    // The first call leaves a pooled connection; the server then drops the second request's connection without
    // answering. With maxRetries(0) nothing may send that POST again. (Reactor Netty's own retry, disabled by the
    // client, does not fire in this case either: it only re-sends requests that did not reach the server.)
    server.play((n, req, res) -> n == 0
        ? sse(res, drip(res, 1, Duration.ofMillis(10), Flux.just(OPENAI_DONE)))
        : Mono.fromRunnable(() -> res.withConnection(c -> c.channel().close())).then(Mono.never()));
    LlmStreamClient client = client(Dialect.OPENAI_CHAT, 0).build();
    assertThat(run(client.stream(REQUEST)).error.get()).isNull();
    Outcome second = run(client.stream(REQUEST));
    assertThat(FailureClassifier.defaults().classify(second.error.get())).isEqualTo(FailureKind.CONNECTION);
    assertThat(server.requests.get()).as("requests the server received").isEqualTo(2);
  }

  @Test
  void theDeadlineTravelsWithTheRequestToAServerThatAskedForIt() {
    server.play((n, req, res) -> sse(res, drip(res, 1, Duration.ofMillis(10), Flux.just(OPENAI_DONE))));
    run(client(Dialect.OPENAI_CHAT).sendDeadline(true).build().stream(REQUEST)
        .transformDeferred(Breakwater.withDeadline(Duration.ofSeconds(30))));
    assertThat(server.deadlineHeaders).hasSize(1);
    assertThat(server.deadlineHeaders.get(0)).matches("\\d{1,8}[HMSmun]");
  }

  @Test
  void theDeadlineIsNotSentToAProviderByDefault() {
    server.play((n, req, res) -> sse(res, drip(res, 1, Duration.ofMillis(10), Flux.just(OPENAI_DONE))));
    run(client(Dialect.OPENAI_CHAT).build().stream(REQUEST)
        .transformDeferred(Breakwater.withDeadline(Duration.ofSeconds(30))));
    assertThat(server.deadlineHeaders).containsExactly("null");
  }

  @Test
  void aRedirectToAnotherHostIsNotFollowedSoTheKeyAndPromptStayHome() {
    List<String> elsewhere = new CopyOnWriteArrayList<>();
    DisposableServer other = HttpServer.create().host("127.0.0.1").port(0)
        .handle((req, res) -> {
          elsewhere.add(req.method() + " " + req.requestHeaders().get("x-api-key") + " "
              + req.requestHeaders().get("x-goog-api-key"));
          return res.sendString(Mono.just(OPENAI_DONE));
        })
        .bindNow();
    try {
      server.play((n, req, res) -> res.status(307)
          .header("Location", "http://127.0.0.1:" + other.port() + "/v1/chat/completions").send());
      Outcome outcome = run(client(Dialect.OPENAI_CHAT, 0).httpClient(HttpClient.create().followRedirect(true))
          .header("x-api-key", "sk-secret-0123456789").header("x-goog-api-key", "AIza-secret").build()
          .stream(REQUEST));
      assertThat(elsewhere).as("requests the other host received").isEmpty();
      Throwable error = outcome.error.get();
      assertThat(error instanceof HttpStatusException ? error : error.getCause())
          .isInstanceOfSatisfying(HttpStatusException.class, e -> assertThat(e.status()).isEqualTo(307));
    } finally {
      other.disposeNow();
    }
  }

  @Test
  void aHedgedCallTakesTheFirstStreamWithContentAndClosesTheStalledOnesConnection() throws Exception {
    // the first request sends framing and then thinks forever; the second answers
    server.play((n, req, res) -> sse(res, n == 0 ? Flux.just(LlmTestServer.OPENAI_ROLE).concatWith(Flux.never())
        : drip(res, 3, Duration.ofMillis(10), Flux.just(OPENAI_DONE))));
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    LlmStreamClient client = client(Dialect.OPENAI_CHAT)
        .hedge(HedgePolicy.builder().name("llm-it-hedge").delay(Duration.ofMillis(200)).budget(1.0)
            .meterRegistry(meters).build())
        .build();

    Outcome outcome = run(client.stream(REQUEST));

    assertThat(outcome.error.get()).isNull();
    assertThat(outcome.text()).isEqualTo("t0t1t2");
    assertThat(outcome.chunks.get(outcome.chunks.size() - 1)).isEqualTo(new LlmDelta.Done(2));
    assertThat(server.requests.get()).isEqualTo(2);
    for (int i = 0; i < 150 && server.closedAtNanos.isEmpty(); i++) {
      Thread.sleep(10);
    }
    assertThat(server.closedAtNanos).as("the server saw the stalled request's connection closed").hasSize(1);
    assertThat(server.openConnections.get()).as("the winner's connection stays open for reuse").isEqualTo(1);
    assertThat(meters.counter("breakwater.hedge.won", "dependency", "llm-it-hedge").count()).isEqualTo(1);
  }

  @Test
  void cancellingTheStreamClosesTheConnection() throws Exception {
    server.play((n, req, res) -> sse(res, drip(res, 1000, Duration.ofMillis(20), Flux.never())));
    AtomicLong cancelledAt = new AtomicLong();
    List<LlmDelta> got = client(Dialect.OPENAI_CHAT).build().stream(REQUEST)
        .doOnCancel(() -> cancelledAt.set(System.nanoTime()))
        .take(2)
        .collectList().block(Duration.ofSeconds(10));
    assertThat(got).hasSize(2);
    assertServerClosedWithinOneSecondOf(cancelledAt.get());
  }

  @Test
  void aThousandCancelledStreamsLeakNoConnections() throws Exception {
    server.play((n, req, res) -> sse(res, drip(res, 1000, Duration.ofMillis(20), Flux.never())));
    List<ConnectionPoolMetrics> pools = new CopyOnWriteArrayList<>();
    ConnectionProvider provider = ConnectionProvider.builder("llm-it").maxConnections(64)
        .pendingAcquireMaxCount(-1)
        .metrics(true, () -> (poolName, id, remoteAddress, metrics) -> pools.add(metrics))
        .build();
    try {
      LlmStreamClient client = client(Dialect.OPENAI_CHAT).httpClient(HttpClient.create(provider)).build();
      Long done = Flux.range(0, 1000)
          .flatMap(i -> client.stream(REQUEST).take(1), 32)
          .count().block(Duration.ofSeconds(60));
      assertThat(done).isEqualTo(1000);
      for (int i = 0; i < 300 && server.openConnections.get() > 0; i++) {
        Thread.sleep(10);
      }
      assertThat(server.openConnections.get()).as("connections the server still sees open").isZero();
      assertThat(pools).isNotEmpty();
      assertThat(pools.stream().mapToInt(ConnectionPoolMetrics::acquiredSize).sum()).isZero();
      assertThat(pools.stream().mapToInt(ConnectionPoolMetrics::allocatedSize).sum()).isZero();
      assertThat(server.requests.get()).isEqualTo(1000);
    } finally {
      provider.disposeLater().block(Duration.ofSeconds(10));
    }
  }

  @Test
  void aHugeErrorBodyIsReadOnlyToItsBoundAndItsConnectionClosed() throws Exception {
    byte[] chunk = new byte[64 * 1024];
    java.util.Arrays.fill(chunk, (byte) 'x');
    AtomicLong sent = new AtomicLong();
    server.play((n, req, res) -> res.status(500).header("Content-Type", "text/plain")
        .send(Flux.range(0, 3200).map(i -> io.netty.buffer.Unpooled.wrappedBuffer(chunk))   // 200 MiB
            .doOnNext(b -> sent.addAndGet(chunk.length))));
    Outcome outcome = run(client(Dialect.OPENAI_CHAT, 0).build().stream(REQUEST));
    assertThat(outcome.error.get()).isInstanceOf(RetryExhaustedException.class)
        .hasCauseInstanceOf(HttpStatusException.class);
    HttpStatusException error = (HttpStatusException) outcome.error.get().getCause();
    assertThat(error.status()).isEqualTo(500);
    assertThat(error.getMessage().length()).isLessThan(300);
    assertServerClosedWithinOneSecondOf(outcome.endNanos);
    assertThat(sent.get()).as("bytes the server could write before the client closed").isLessThan(64L << 20);
  }

  @Test
  void eachAttemptSendsTheTimeItHasLeft() {
    server.play((n, req, res) -> n == 0
        ? res.status(503).header("Retry-After", "1").sendString(Mono.just("busy"))
        : sse(res, drip(res, 1, Duration.ofMillis(10), Flux.just(OPENAI_DONE))));
    Outcome outcome = run(client(Dialect.OPENAI_CHAT).sendDeadline(true).build().stream(REQUEST)
        .transformDeferred(Breakwater.withDeadline(Duration.ofSeconds(30))));
    assertThat(outcome.error.get()).isNull();
    assertThat(server.deadlineHeaders).hasSize(2);
    long first = millis(server.deadlineHeaders.get(0));
    long second = millis(server.deadlineHeaders.get(1));
    assertThat(first).isBetween(25_000L, 30_000L);
    assertThat(first - second).as("the second attempt was sent at least Retry-After later").isGreaterThanOrEqualTo(1_000L);
  }

  /** A {@code Breakwater-Timeout} value in milliseconds. */
  private static long millis(String header) {
    long value = Long.parseLong(header.substring(0, header.length() - 1));
    return switch (header.charAt(header.length() - 1)) {
      case 'H' -> value * 3_600_000L;
      case 'M' -> value * 60_000L;
      case 'S' -> value * 1_000L;
      case 'm' -> value;
      case 'u' -> value / 1_000L;
      default -> value / 1_000_000L;
    };
  }

  @Test
  void theDefaultPoolHoldsHundredsOfOpenStreamsWithoutQueueingThem() {
    int streams = 300;
    java.util.concurrent.atomic.AtomicInteger open = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger peak = new java.util.concurrent.atomic.AtomicInteger();
    server.play((n, req, res) -> {
      peak.accumulateAndGet(open.incrementAndGet(), Math::max);
      return sse(res, drip(res, 30, Duration.ofMillis(200), Flux.just(OPENAI_DONE))
          .doFinally(signal -> open.decrementAndGet()));
    });
    // a loaded machine delays the server's ticks, so the idle budget here is generous: waiting for a pooled
    // connection can no longer look like an idle server anyway (the idle clock starts at the first content)
    LlmStreamClient client = LlmStreamClient.builder(server.baseUrl(), Dialect.OPENAI_CHAT)
        .timeouts(StreamTimeouts.builder().firstItem(Duration.ofSeconds(30)).idle(Duration.ofSeconds(5)).build())
        .build();   // the default pool
    List<Throwable> errors = new CopyOnWriteArrayList<>();
    Long done = Flux.range(0, streams)
        .flatMap(i -> client.stream(REQUEST).as(LlmResponse::aggregate)
            .doOnError(errors::add).onErrorResume(e -> Mono.empty()), streams)
        .count().block(Duration.ofSeconds(120));
    assertThat(errors).as("no healthy stream timed out waiting for a connection").isEmpty();
    assertThat(done).isEqualTo(streams);
    // Reactor Netty's shared default pool would hold 16 here (2 cores) and queue the rest
    assertThat(peak.get()).as("streams the server held open at once").isGreaterThan(100);
  }
}
