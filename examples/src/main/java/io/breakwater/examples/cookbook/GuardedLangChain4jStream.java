package io.breakwater.examples.cookbook;

import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.streamTimeouts;
import static io.breakwater.Breakwater.withDeadline;

import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import io.breakwater.examples.travel.ScriptedLlmServer;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.StreamTimeouts;
import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * Cookbook: a LangChain4j streaming model behind Breakwater's stream guards. A model that accepts the request and
 * never sends a token is cut at the first-item timeout and asked again; one that stalls mid-answer is cut at the idle
 * timeout, and the tokens already delivered stay delivered (no retry then: the answer would be repeated).
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

  private final StreamingChatModel model;
  private final StreamTimeouts timeouts;
  private final RetryPolicy retry;

  public GuardedLangChain4jStream(StreamingChatModel model, StreamTimeouts timeouts, RetryPolicy retry) {
    this.model = model;
    this.timeouts = timeouts;
    this.retry = retry;
  }

  // snippet:cookbook-langchain4j-model
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

  public Flux<String> answer(String question) {
    return answer(model, timeouts, retry, question);
  }

  // snippet:cookbook-langchain4j-guarded
  /** The answer, token by token: asked again while no token came, failed by a stall after the first. */
  static Flux<String> answer(StreamingChatModel model, StreamTimeouts timeouts, RetryPolicy retry, String question) {
    ChatRequest request = ChatRequest.builder().messages(UserMessage.from(question)).build();
    return LangChain4jTokens.tokens(model, request)
        .transformDeferred(streamTimeouts(timeouts))  // a first token in time, then no stall longer than idle
        .transformDeferred(retryWithBudget(retry))    // a Flux is retried only while it has emitted nothing
        .transformDeferred(withDeadline(Duration.ofSeconds(60)));
  }
  // end-snippet

  /** Streams an answer from the scripted LLM server on loopback, whose first stream stalls before its first token. */
  public static void main(String[] args) {
    try (ScriptedLlmServer server = new ScriptedLlmServer("Take the morning train to Lyon and lunch at a bouchon.")) {
      GuardedLangChain4jStream llm = new GuardedLangChain4jStream(model(server.baseUrl() + "/v1", "not-needed-locally", "local"),
          StreamTimeouts.builder().firstItem(Duration.ofSeconds(2)).idle(Duration.ofSeconds(1)).build(),
          RetryPolicy.builder().name("llm").maxRetries(2).build());
      llm.answer("Plan a day in Lyon").doOnNext(System.out::print).blockLast(Duration.ofSeconds(30));
      System.out.println();
      System.out.println("streams requested: " + server.requests());
    }
    Schedulers.shutdownNow();
  }
}
