package io.breakwater.examples.springai;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.Breakwater;
import io.breakwater.examples.zombies.WalkAwayServer;
import io.breakwater.examples.zombies.ZombieCheck;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.stream.FirstItemTimeoutException;
import io.breakwater.stream.IdleTimeoutException;
import io.breakwater.stream.StreamTimeouts;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A ChatClient on Spring AI's OpenAI chat model, guarded by breakwater-spring-ai, against a loopback server that drips,
 * stalls behind heartbeats, or never starts.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class GuardedSpringAiStreamIT {

  /** Generous for the first token: the first Spring AI call in a JVM takes seconds to warm up. */
  private static final StreamTimeouts TIMEOUTS = StreamTimeouts.builder()
      .firstItem(Duration.ofSeconds(15)).idle(Duration.ofSeconds(1)).build();

  private volatile Function<HttpServerResponse, Flux<String>> body;
  private final DisposableServer server = HttpServer.create().host("127.0.0.1").port(0)
      .route(routes -> routes.post("/v1/chat/completions", (req, res) -> {
        return req.receive().then()
            .thenMany(res.header("Content-Type", "text/event-stream").sendString(Flux.defer(() -> body.apply(res))));
      }))
      .bindNow();

  @AfterEach
  void stop() {
    server.disposeNow();
  }

  private static String chunk(String content) {
    return "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
        + "\"model\":\"local\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + content + "\"},"
        + "\"finish_reason\":null}]}\n\n";
  }

  private static final String STOP = "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\","
      + "\"created\":1700000000,\"model\":\"local\",\"choices\":[{\"index\":0,\"delta\":{},"
      + "\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

  /** Ticks on the connection's event loop (cancelling them then takes no lock). */
  private static Flux<Long> ticks(HttpServerResponse res, Duration every) {
    AtomicReference<Scheduler> loop = new AtomicReference<>();
    res.withConnection(c -> loop.set(Schedulers.fromExecutorService(c.channel().eventLoop())));
    return Flux.interval(every, every, loop.get());
  }

  private GuardedSpringAiStream guarded() {
    return guarded(TIMEOUTS);
  }

  private GuardedSpringAiStream guarded(StreamTimeouts timeouts) {
    return guarded("http://127.0.0.1:" + server.port() + "/v1", timeouts);
  }

  private static GuardedSpringAiStream guarded(String baseUrl, StreamTimeouts timeouts) {
    return new GuardedSpringAiStream(baseUrl, "local", timeouts, Duration.ofSeconds(30));
  }

  /** The OkHttp and SDK frames of a thread that is still serving a stream (idle pool threads show none). */
  static final String[] SDK_CALL_FRAMES = {"okhttp3.internal.connection.RealCall.execute",
      "okhttp3.internal.connection.RealCall$AsyncCall.run", "com.openai."};

  /** After the warm-up: 2 s for a first token, then 1 s between tokens. */
  private static final StreamTimeouts WARM_TIMEOUTS = StreamTimeouts.builder()
      .firstItem(Duration.ofSeconds(2)).idle(Duration.ofSeconds(1)).build();

  /**
   * The first Spring AI call in a JVM takes seconds (the SDK's Kotlin reflection, slower still under BlockHound), and
   * concurrent first calls wait on each other's locks: one call first, so the timeouts time the streams.
   */
  @BeforeAll
  static void warmUp() {
    try (WalkAwayServer warmUp = new WalkAwayServer(WalkAwayServer.Stall.AFTER_TWO_TOKENS)) {
      OpenAiChatModel.builder().options(OpenAiChatOptions.builder().baseUrl(warmUp.baseUrl() + "/v1").apiKey("k")
              .model("local").maxRetries(0).build()).build()
          .stream(new Prompt("warm up")).take(1).blockLast(Duration.ofSeconds(60));
    }
  }

  @ParameterizedTest
  @EnumSource(WalkAwayServer.Stall.class)
  void twentyStalledStreamsAreAllClosedWithinOneSecondOfTheirTimeoutAndNoSdkThreadIsLeft(WalkAwayServer.Stall stall)
      throws InterruptedException {
    ZombieCheck.everyStalledStreamIsClosed(stall,
        walkAway -> guarded(walkAway.baseUrl() + "/v1", WARM_TIMEOUTS).tokens("hi"), SDK_CALL_FRAMES);
  }

  @Test
  void withoutCancellableCallsStalledStreamsKeepTheirConnections() throws InterruptedException {
    // Cancelling the plain stream closes the SDK's reader, which waits for the reader's lock while the SDK's thread is
    // blocked reading the stalled socket. Off the timers' thread, on threads of this test's own: a parallel worker
    // blocked there stays blocked until the socket ends, and every later timer of the JVM that lands on it never fires
    // (seen once in CI: the tests after this one timed out one after another)
    Scheduler closing = Schedulers.newBoundedElastic(ZombieCheck.STREAMS, 100, "plain-stream-cancel");
    // A server that never answers: Spring AI's clean-up closes the SDK's stream only once the headers have come, so
    // before them it closes nothing (after them, its drain of the body closes some connections, depending on timing)
    try (WalkAwayServer walkAway = new WalkAwayServer(WalkAwayServer.Stall.NO_HEADERS)) {
      OpenAiChatModel plain = OpenAiChatModel.builder()
          .options(OpenAiChatOptions.builder().baseUrl(walkAway.baseUrl() + "/v1").apiKey("k").model("local")
              .maxRetries(0).build())
          .build();
      Flux.range(0, ZombieCheck.STREAMS)
          .flatMap(i -> plain.stream(new Prompt("hi")).cancelOn(closing)
              .transformDeferred(Breakwater.streamTimeouts(WARM_TIMEOUTS))
              .then().onErrorResume(FirstItemTimeoutException.class, e -> Mono.empty()))
          .blockLast(Duration.ofSeconds(60));
      Thread.sleep(ZombieCheck.CLOSE_WITHIN.toMillis());

      // every request is still open a second after its stream was cancelled
      assertThat(walkAway.requests()).isEqualTo(ZombieCheck.STREAMS);
      assertThat(walkAway.closedNanos()).isEmpty();
    } finally {
      closing.dispose();
    }
  }

  @Test
  void theOneLineSetupStreamsTheAnswer() {
    body = res -> Flux.just(chunk("Hel"), chunk("lo"), STOP);
    OpenAiChatModel model = OpenAiChatModel.builder().options(OpenAiChatOptions.builder()
        .baseUrl("http://127.0.0.1:" + server.port() + "/v1").apiKey("k").model("local").maxRetries(0).build()).build();
    List<String> tokens = GuardedSpringAiStream.oneLine(model).prompt("hi").stream().content()
        .filter(t -> !t.isEmpty()).collectList().block(Duration.ofSeconds(30));
    assertThat(tokens).containsExactly("Hel", "lo");
  }

  @Test
  void tokensFlowThroughTheGuard() {
    body = res -> ticks(res, Duration.ofMillis(20)).take(3).map(i -> chunk("t" + i)).concatWith(Flux.just(STOP));
    List<String> tokens = guarded().tokens("hi").collectList().block(Duration.ofSeconds(30));
    assertThat(tokens).containsExactly("t0", "t1", "t2");
  }

  private final List<String> tokens = new CopyOnWriteArrayList<>();
  private final AtomicLong lastTokenAt = new AtomicLong();
  private final AtomicLong errorAt = new AtomicLong();

  private Throwable runStalledStream() {
    body = res -> Flux.just(chunk("t0"), chunk("t1"))
        .concatWith(ticks(res, Duration.ofMillis(100)).map(i -> ": keep-alive\n\n"));
    return guarded().tokens("hi")
        .doOnNext(t -> {
          tokens.add(t);
          lastTokenAt.set(System.nanoTime());
        })
        .doOnError(e -> errorAt.set(System.nanoTime()))
        .then(Mono.<Throwable>empty()).onErrorResume(Mono::just).block(Duration.ofSeconds(30));
  }

  @Test
  void aStallBehindHeartbeatsIsCaughtByTheIdleTimeout() {
    Throwable error = runStalledStream();
    assertThat(tokens).containsExactly("t0", "t1");
    assertThat(error).isInstanceOf(IdleTimeoutException.class);
    // idle 1 s: detected 1 s to 1.25 s after the last token, plus scheduling slack on a busy machine
    assertThat(Duration.ofNanos(errorAt.get() - lastTokenAt.get()))
        .isBetween(Duration.ofSeconds(1), Duration.ofSeconds(2));
  }

  @Test
  void onlyHeartbeatsIsAFirstItemTimeoutAskedAgainTwiceThenGivenUp() {
    body = res -> ticks(res, Duration.ofMillis(100)).map(i -> ": keep-alive\n\n");
    StreamTimeouts firstItemOnly = StreamTimeouts.builder().firstItem(Duration.ofSeconds(1)).build();
    Throwable error = guarded(firstItemOnly).tokens("hi").then(Mono.<Throwable>empty()).onErrorResume(Mono::just)
        .block(Duration.ofSeconds(30));
    // the advisor's default retry policy: 2 retries while no token came
    assertThat(error).isInstanceOf(RetryExhaustedException.class).hasCauseInstanceOf(FirstItemTimeoutException.class);
    assertThat(((RetryExhaustedException) error).attempts()).hasSize(3);
  }
}
