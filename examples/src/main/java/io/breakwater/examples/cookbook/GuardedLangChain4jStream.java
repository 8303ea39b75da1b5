package io.breakwater.examples.cookbook;

import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import io.breakwater.examples.travel.ScriptedLlmServer;
import io.breakwater.langchain4j.CancellableHttpClientBuilder;
import io.breakwater.langchain4j.GuardedStreamingChatModel;
import io.breakwater.langchain4j.ModelGuard;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.llm.LlmGuard;
import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * A LangChain4j streaming model guarded by breakwater-langchain4j. A model that accepts the request and never sends a
 * token is cut at the first-token timeout and asked again; one that stalls mid-answer is cut at the idle timeout, and
 * the tokens already delivered stay delivered (no retry then: the answer would be repeated).
 *
 * <pre>{@code
 * GuardedLangChain4jStream llm = new GuardedLangChain4jStream(
 *     GuardedLangChain4jStream.model("https://api.example.com/v1", apiKey, "gpt-4o-mini"),
 *     StreamTimeouts.builder().firstItem(Duration.ofSeconds(20)).idle(Duration.ofSeconds(5)).build(),
 *     RetryPolicy.builder().name("llm").maxRetries(2).build());
 * llm.answer("Plan a trip to Lyon").subscribe(System.out::print);
 * }</pre>
 */
public final class GuardedLangChain4jStream {

  private final GuardedStreamingChatModel model;

  public GuardedLangChain4jStream(StreamingChatModel model, StreamTimeouts timeouts, RetryPolicy retry) {
    this.model = guarded(model, timeouts, retry);
  }

  // snippet:langchain4j-one-line
  /** {@code model}, with every request guarded with Breakwater's defaults. */
  public static StreamingChatModel oneLine(StreamingChatModel model) {
    return ModelGuard.of("openai").guard(model);
  }
  // end-snippet

  // snippet:langchain4j-guard
  /** {@code model}, guarded with timeouts and retries of your own. */
  public static GuardedStreamingChatModel guarded(StreamingChatModel model, StreamTimeouts timeouts,
      RetryPolicy retry) {
    LlmGuard guard = LlmGuard.builder("openai")
        .timeouts(timeouts)                 // a first token in time, then no stall longer than idle
        .retry(retry)                       // asked again only while no token came
        .deadline(Duration.ofSeconds(60))   // the whole answer, retries included
        .build();
    return ModelGuard.of(guard).guard(model);
  }
  // end-snippet

  // snippet:langchain4j-model
  /** LangChain4j's OpenAI streaming model, on the JDK HTTP client, for the server at {@code baseUrl}. */
  public static StreamingChatModel model(String baseUrl, String apiKey, String modelName) {
    return OpenAiStreamingChatModel.builder()
        .baseUrl(baseUrl)
        .apiKey(apiKey)
        .modelName(modelName)
        // the JDK client, with streams that can be closed before their response or their first token
        .httpClientBuilder(new CancellableHttpClientBuilder())
        .timeout(Duration.ofSeconds(30))   // the JDK client's: it bounds the wait for headers, not the stream
        .build();
  }
  // end-snippet

  /** The answer, token by token: asked again while no token came, failed by a stall after the first. */
  public Flux<String> answer(String question) {
    return model.tokens(ChatRequest.builder().messages(UserMessage.from(question)).build());
  }

  /** Streams an answer from the scripted LLM server on loopback, whose first stream stalls before its first token. */
  public static void main(String[] args) {
    try (ScriptedLlmServer server = new ScriptedLlmServer("Take the morning train to Lyon and lunch at a bouchon.")) {
      GuardedLangChain4jStream llm = new GuardedLangChain4jStream(
          model(server.baseUrl() + "/v1", "not-needed-locally", "local"),
          StreamTimeouts.builder().firstItem(Duration.ofSeconds(2)).idle(Duration.ofSeconds(1)).build(),
          RetryPolicy.builder().name("llm").maxRetries(2).build());
      llm.answer("Plan a day in Lyon").doOnNext(System.out::print).blockLast(Duration.ofSeconds(30));
      System.out.println();
      System.out.println("streams requested: " + server.requests());
    }
    Schedulers.shutdownNow();
  }
}
