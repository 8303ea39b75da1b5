package io.breakwater.examples.cookbook;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import io.breakwater.Breakwater;
import io.breakwater.examples.travel.ScriptedLlmServer;
import io.breakwater.examples.zombies.WalkAwayServer;
import io.breakwater.examples.zombies.ZombieCheck;
import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.langchain4j.GuardedStreamingChatModel;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.IdleTimeoutException;
import io.breakwater.stream.StreamTimeouts;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/** The LangChain4j recipe against the scripted SSE LLM server on loopback. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class GuardedLangChain4jStreamIT {

  private static final String ANSWER = "Take the morning train to Lyon and lunch at a bouchon.";
  private static final StreamTimeouts TIMEOUTS = StreamTimeouts.builder()
      .firstItem(Duration.ofSeconds(2)).idle(Duration.ofSeconds(1)).build();

  private static GuardedLangChain4jStream guarded(ScriptedLlmServer server) {
    return guarded(server.baseUrl());
  }

  private static GuardedLangChain4jStream guarded(String baseUrl) {
    return new GuardedLangChain4jStream(GuardedLangChain4jStream.model(baseUrl + "/v1", "not-needed-locally", "local"),
        TIMEOUTS, RetryPolicy.builder().name("llm").maxRetries(2).build());
  }

  /** The first LangChain4j call in a JVM takes seconds (class loading): not the first-item timeout's business. */
  @BeforeAll
  static void warmUp() {
    try (ScriptedLlmServer server = new ScriptedLlmServer(ANSWER, 3)) {
      new GuardedLangChain4jStream(GuardedLangChain4jStream.model(server.baseUrl() + "/v1", "not-needed-locally",
          "local"), StreamTimeouts.builder().firstItem(Duration.ofSeconds(30)).build(),
          RetryPolicy.builder().name("llm").build())
          .answer("warm up").take(1).blockLast(Duration.ofSeconds(30));
    }
  }

  private static void awaitStalledStreamsClosed(ScriptedLlmServer server, int expected) throws InterruptedException {
    for (int i = 0; i < 150 && server.stalledStreamsClosed() < expected; i++) {
      Thread.sleep(20);
    }
  }

  @Test
  void aStreamWithoutAFirstTokenIsClosedAndAskedAgain() throws InterruptedException {
    try (ScriptedLlmServer server = new ScriptedLlmServer(ANSWER)) {
      String answer = guarded(server).answer("Plan a day in Lyon").collectList().map(t -> String.join("", t))
          .block(Duration.ofSeconds(30));

      assertThat(answer).isEqualTo(ANSWER);
      assertThat(server.requests()).isEqualTo(2);
      // no StreamingHandle without a token: the builder's body closed the stalled stream's connection
      awaitStalledStreamsClosed(server, 1);
      assertThat(server.stalledStreamsClosed()).isEqualTo(1);
    }
  }

  @Test
  void withoutTheBuilderAStreamWithoutAFirstTokenStaysOpen() throws InterruptedException {
    try (ScriptedLlmServer server = new ScriptedLlmServer(ANSWER)) {
      StreamingChatModel plain = OpenAiStreamingChatModel.builder()
          .baseUrl(server.baseUrl() + "/v1").apiKey("not-needed-locally").modelName("local").build();
      String answer = new GuardedLangChain4jStream(plain, TIMEOUTS, RetryPolicy.builder().name("llm").build())
          .answer("Plan a day in Lyon").collectList().map(t -> String.join("", t)).block(Duration.ofSeconds(30));

      assertThat(answer).isEqualTo(ANSWER);
      // LangChain4j 1.19 has no handle to cancel with before a token: the stalled stream is still being read
      Thread.sleep(500);
      assertThat(server.stalledStreamsClosed()).isZero();
    }
  }

  @Test
  void aStallMidAnswerFailsKeepsTheTokensAndClosesTheConnection() throws InterruptedException {
    try (ScriptedLlmServer server = new ScriptedLlmServer(ANSWER, 3)) {
      List<String> tokens = new CopyOnWriteArrayList<>();
      Throwable error = guarded(server).answer("Plan a day in Lyon")
          .doOnNext(tokens::add)
          .then(Mono.<Throwable>empty()).onErrorResume(Mono::just).block(Duration.ofSeconds(30));

      // the stall itself, after the partial answer: not retried, the stream had emitted
      assertThat(error).isInstanceOf(IdleTimeoutException.class);
      assertThat(tokens).containsExactly("Take ", "the ", "morning ");
      assertThat(server.requests()).isEqualTo(1);           // not retried: the answer would repeat
      awaitStalledStreamsClosed(server, 1);
      assertThat(server.stalledStreamsClosed()).isEqualTo(1);
    }
  }

  @Test
  void aRateLimitFromTheServerArrivesAsAClassifiableHttpStatusExceptionWithItsHeaders() {
    DisposableServer limited = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes.post("/v1/chat/completions", (req, res) -> req.receive().then()
            .then(res.status(429).header("Retry-After", "1").sendString(Mono.just("{\"error\":\"slow down\"}"))
                .then())))
        .bindNow();
    try {
      Throwable error = new GuardedLangChain4jStream(
              GuardedLangChain4jStream.model("http://127.0.0.1:" + limited.port() + "/v1", "key", "local"),
              TIMEOUTS, RetryPolicy.builder().name("llm").maxRetries(0).build())
          .answer("hi")
          .then(Mono.<Throwable>empty()).onErrorResume(Mono::just).block(Duration.ofSeconds(30));

      assertThat(error).isInstanceOf(RetryExhaustedException.class).hasCauseInstanceOf(HttpStatusException.class);
      HttpStatusException status = (HttpStatusException) error.getCause();
      assertThat(status.status()).isEqualTo(429);
      assertThat(FailureClassifier.defaults().classify(status)).isEqualTo(FailureKind.RATE_LIMITED);
      // LangChain4j does not pass the response headers on; the module's HTTP client builder keeps them
      assertThat(status.header("Retry-After")).hasValue("1");
    } finally {
      limited.disposeNow();
    }
  }

  @Test
  void theOneLineSetupStreamsTheAnswer() {
    try (ScriptedLlmServer server = new ScriptedLlmServer(ANSWER)) {
      StreamingChatModel guarded = GuardedLangChain4jStream.oneLine(
          GuardedLangChain4jStream.model(server.baseUrl() + "/v1", "not-needed-locally", "local"));
      // the defaults take their timeouts from the deadline in force: 3 s for a first token of a 5 s task
      String answer = ((GuardedStreamingChatModel) guarded).tokens(ChatRequest.builder()
              .messages(UserMessage.from("hi")).build())
          .transformDeferred(Breakwater.withDeadline(Duration.ofSeconds(5)))
          .collectList().map(t -> String.join("", t)).block(Duration.ofSeconds(30));
      assertThat(answer).isEqualTo(ANSWER);
      assertThat(server.requests()).as("the stalled first stream was asked again").isEqualTo(2);
    }
  }

  @Test
  void cancellingTheFluxClosesTheModelsConnection() throws InterruptedException {
    try (ScriptedLlmServer server = new ScriptedLlmServer(ANSWER, 3)) {
      List<String> tokens = guarded(server).answer("Plan a day in Lyon").take(2).collectList()
          .block(Duration.ofSeconds(30));

      assertThat(tokens).containsExactly("Take ", "the ");
      awaitStalledStreamsClosed(server, 1);
      assertThat(server.stalledStreamsClosed()).isEqualTo(1);
    }
  }

  /** A thread still inside a LangChain4j stream: its SSE parser reading the body (idle pool threads show none). */
  private static final String[] CLIENT_CALL_FRAMES = {"dev.langchain4j."};

  @ParameterizedTest
  @EnumSource(WalkAwayServer.Stall.class)
  void twentyStalledStreamsAreAllClosedWithinOneSecondOfTheirTimeoutAndNoClientThreadIsLeft(WalkAwayServer.Stall stall)
      throws InterruptedException {
    // before a first token each stream is asked again twice (three requests), then gives up
    ZombieCheck.everyStalledStreamIsClosed(stall, walkAway -> guarded(walkAway.baseUrl()).answer("hi"),
        CLIENT_CALL_FRAMES);
  }
}
