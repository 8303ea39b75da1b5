package io.breakwater.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.PartialResponse;
import dev.langchain4j.model.chat.response.PartialResponseContext;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerOpenException;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.IdleTimeoutException;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.llm.LlmGuard;
import io.breakwater.testing.llm.ScriptedModelServer;
import io.breakwater.testing.llm.ScriptedModelServer.Format;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The guarded models around LangChain4j's real OpenAI models (on its JDK HTTP client), against a loopback server
 * replaying streams in OpenAI's format: each scenario of the module.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class GuardedModelsIT {

  /** Short budgets: real HTTP cannot run in virtual time. */
  private static final StreamTimeouts TIMEOUTS = StreamTimeouts.builder()
      .firstItem(Duration.ofMillis(800)).idle(Duration.ofMillis(300)).build();

  private final ScriptedModelServer server = new ScriptedModelServer();

  @AfterEach
  void stop() {
    server.close();
  }

  private static StreamingChatModel streaming(String baseUrl) {
    return OpenAiStreamingChatModel.builder().baseUrl(baseUrl).apiKey("not-needed-locally").modelName("local")
        .httpClientBuilder(new CancellableHttpClientBuilder())   // closes cancelled streams, keeps the headers
        .timeout(Duration.ofSeconds(30))
        .build();
  }

  private static ChatModel blocking(String baseUrl) {
    return OpenAiChatModel.builder().baseUrl(baseUrl).apiKey("not-needed-locally").modelName("local")
        .maxRetries(0).timeout(Duration.ofSeconds(30)).build();
  }

  /** LangChain4j's first call in a JVM loads its classes: one first, untimed. */
  @BeforeAll
  static void warmUp() throws Exception {
    try (ScriptedModelServer warm = new ScriptedModelServer()) {
      Answer answer = new Answer();
      streaming(warm.baseUrl(Format.OPENAI)).chat(request(), answer);
      answer.done.get(60, TimeUnit.SECONDS);
    }
  }

  private static ChatRequest request() {
    return ChatRequest.builder().messages(UserMessage.from("hi")).build();
  }

  private static RetryPolicy retry(int maxRetries) {
    return RetryPolicy.builder().name("langchain4j-it").maxRetries(maxRetries)
        .backoff(Backoff.fullJitter(Duration.ofMillis(10), Duration.ofMillis(20))).build();
  }

  private GuardedStreamingChatModel guarded(UnaryOperator<LlmGuard.Builder> settings) {
    return ModelGuard.of(settings.apply(LlmGuard.builder("local").timeouts(TIMEOUTS).retry(retry(1))).build())
        .guard(streaming(server.baseUrl(Format.OPENAI)));
  }

  /** What a handler was told: the tokens, then the response or the error. */
  static final class Answer implements StreamingChatResponseHandler {
    final List<String> tokens = new CopyOnWriteArrayList<>();
    final CompletableFuture<Object> done = new CompletableFuture<>();
    volatile long lastTokenNanos;
    volatile PartialResponseContext context;

    @Override
    public void onPartialResponse(PartialResponse partial, PartialResponseContext context) {
      this.context = context;
      if (!partial.text().isEmpty()) {
        tokens.add(partial.text());
        lastTokenNanos = System.nanoTime();
      }
    }

    @Override
    public void onCompleteResponse(ChatResponse response) {
      done.complete(response);
    }

    @Override
    public void onError(Throwable error) {
      done.complete(error);
    }

    Object outcome() throws Exception {
      return done.get(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void aStallAfterTheFirstTokensEndsAtTheIdleBudgetWithThePartialAnswer() throws Exception {
    server.then(ScriptedModelServer.stallAfter("Hel", "lo"));
    Answer answer = new Answer();

    guarded(b -> b).chat(request(), answer);
    Object outcome = answer.outcome();
    long endedAt = System.nanoTime();

    assertThat(answer.tokens).containsExactly("Hel", "lo");
    assertThat(outcome).isInstanceOf(IdleTimeoutException.class);
    // idle 300 ms from the last content, timed by the operator when the token passed it, a little before the handler
    // saw it; plus slack on a busy machine
    assertThat(Duration.ofNanos(endedAt - answer.lastTokenNanos))
        .isBetween(Duration.ofMillis(250), Duration.ofMillis(1500));
    assertThat(server.requests()).as("not retried after content").isEqualTo(1);
  }

  @Test
  void aSlowFirstTokenIsRetriedOnceAndTheRetrySucceeds() throws Exception {
    server.then(ScriptedModelServer.firstTokenAfter(Duration.ofSeconds(5), "late"),
        ScriptedModelServer.tokens("Hel", "lo"));
    Answer answer = new Answer();

    guarded(b -> b).chat(request(), answer);

    assertThat(answer.outcome()).isInstanceOf(ChatResponse.class);
    assertThat(answer.tokens).containsExactly("Hel", "lo");
    assertThat(((ChatResponse) answer.outcome()).aiMessage().text()).isEqualTo("Hello");
    assertThat(server.requests()).isEqualTo(2);
  }

  @Test
  void aRateLimitWithRetryAfterIsHonoured() throws Exception {
    server.then(ScriptedModelServer.status(429, Map.of("Retry-After", "1")), ScriptedModelServer.tokens("ok"));
    Answer answer = new Answer();

    guarded(b -> b).chat(request(), answer);

    assertThat(answer.outcome()).isInstanceOf(ChatResponse.class);
    assertThat(server.requests()).isEqualTo(2);
    long gap = server.requestNanos().get(1) - server.requestNanos().get(0);
    // Retry-After: 1 (a rate limit without one waits at least 5 s)
    assertThat(Duration.ofNanos(gap)).as("the retry waited for Retry-After")
        .isBetween(Duration.ofMillis(950), Duration.ofSeconds(3));
  }

  @Test
  void theBreakerOpensAfterABurstOf5xxAndTheModelAnswersWithoutARequest() throws Exception {
    server.otherwise(ScriptedModelServer.status(503, Map.of()));
    CircuitBreaker breaker = CircuitBreaker.builder("langchain4j-it").minimumCalls(5)
        .failureRateThreshold(0.5).openDuration(Duration.ofMinutes(1)).build();
    GuardedStreamingChatModel model = guarded(b -> b.breaker(breaker).retry(retry(0)));

    List<Object> outcomes = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      Answer answer = new Answer();
      model.chat(request(), answer);
      outcomes.add(answer.outcome());
    }

    assertThat(outcomes.subList(0, 5)).allSatisfy(o -> assertThat(o).isInstanceOf(RetryExhaustedException.class)
        .extracting(e -> ((Throwable) e).getCause()).isInstanceOf(HttpStatusException.class));
    assertThat(outcomes.get(5)).isInstanceOf(CircuitBreakerOpenException.class);
    assertThat(server.requests()).as("the sixth call sent no request").isEqualTo(5);
  }

  @Test
  void cancellingTheStreamClosesTheConnectionWithinOneSecond() throws Exception {
    int streams = 20;
    server.otherwise(ScriptedModelServer.stallAfter("Hel", "lo"));
    GuardedStreamingChatModel model = guarded(b -> b.timeouts(StreamTimeouts.builder()
        .firstItem(Duration.ofSeconds(10)).idle(Duration.ofSeconds(10)).build()));

    List<Answer> answers = new ArrayList<>();
    for (int i = 0; i < streams; i++) {
      Answer answer = new Answer();
      model.chat(request(), answer);
      answers.add(answer);
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    for (Answer answer : answers) {
      while (answer.tokens.size() < 2 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      answer.context.streamingHandle().cancel();
    }
    long cancelledAt = System.nanoTime();

    long bound = cancelledAt + Duration.ofSeconds(1).toNanos();
    while (server.closedNanos().size() < streams && System.nanoTime() < bound) {
      Thread.sleep(10);
    }
    assertThat(answers).allSatisfy(a -> assertThat(a.tokens).containsExactly("Hel", "lo"));
    assertThat(server.requests()).isEqualTo(streams);
    assertThat(server.closedNanos()).as("connections closed within 1 s of the cancellations").hasSize(streams)
        .allSatisfy(at -> assertThat(at).isLessThanOrEqualTo(bound));
  }

  @Test
  void aBlockingCallIsRetriedAfterA5xx() {
    server.then(ScriptedModelServer.status(503, Map.of()), ScriptedModelServer.tokens("Hel", "lo"));
    ChatModel model = ModelGuard.of(LlmGuard.builder("local-blocking").retry(retry(1)).build())
        .guard(blocking(server.baseUrl(Format.OPENAI)));

    String answer = model.chat("hi");

    assertThat(answer).isEqualTo("Hello");
    assertThat(server.requests()).isEqualTo(2);
  }
}
