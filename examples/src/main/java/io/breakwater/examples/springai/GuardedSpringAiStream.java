package io.breakwater.examples.springai;

import io.breakwater.springai.BreakwaterAdvisor;
import io.breakwater.springai.CancellableCalls;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.llm.LlmGuard;
import java.time.Duration;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import reactor.core.publisher.Flux;

/**
 * A Spring AI {@link ChatClient} on the OpenAI chat model (the official OpenAI Java SDK on OkHttp), guarded by
 * breakwater-spring-ai, for any OpenAI-compatible server.
 *
 * <p>The SDK's own timeout is on socket reads, so a server that stalls but keeps sending SSE heartbeats keeps the
 * stream alive forever. The heartbeats never reach the {@code ChatClient}, so the advisor's progress clock sees the
 * stall, and {@link CancellableCalls} makes the cancellation close the stream's connection:
 *
 * <pre>{@code
 * Flux<String> tokens = new GuardedSpringAiStream("https://api.example.com/v1", "gpt-4o-mini", timeouts,
 *     Duration.ofSeconds(60)).tokens("Plan a trip to Lyon");
 * }</pre>
 */
public final class GuardedSpringAiStream {

  private final ChatClient chat;

  /** A guarded client of the OpenAI-compatible server at {@code baseUrl} (e.g. {@code http://host:port/v1}). */
  public GuardedSpringAiStream(String baseUrl, String modelName, StreamTimeouts timeouts, Duration taskBudget) {
    this.chat = chatClient(baseUrl, modelName, timeouts, taskBudget);
  }

  // snippet:spring-ai-one-line
  /** A client whose every call and stream is guarded with Breakwater's defaults. */
  public static ChatClient oneLine(ChatModel model) {
    return ChatClient.builder(model).defaultAdvisors(BreakwaterAdvisor.of("openai")).build();
  }
  // end-snippet

  // snippet:spring-ai-guarded-client
  /** A guarded client whose cancelled calls close their connections, for the server at {@code baseUrl}. */
  public static ChatClient chatClient(String baseUrl, String modelName, StreamTimeouts timeouts,
      Duration taskBudget) {
    CancellableCalls calls = new CancellableCalls();
    OpenAiChatModel model = OpenAiChatModel.builder()
        .options(OpenAiChatOptions.builder()
            .baseUrl(baseUrl)
            .apiKey("not-needed-locally")
            .model(modelName)
            .maxRetries(0)                      // retries belong to the advisor, which knows what was delivered
            .build())
        .httpClientBuilderCustomizer(calls.openAi())   // a cancelled call closes its connection
        .build();
    LlmGuard guard = LlmGuard.builder("openai")
        .timeouts(timeouts)                     // a first token in time, then no stall longer than idle
        .deadline(taskBudget)                   // the whole answer, retries included
        .build();
    BreakwaterAdvisor advisor = BreakwaterAdvisor.builder(guard).cancellableCalls(calls).build();
    return ChatClient.builder(model).defaultAdvisors(advisor).build();
  }
  // end-snippet

  /** The answer's text, token by token: a first token within the first-item timeout, then no stall longer than idle. */
  public Flux<String> tokens(String question) {
    return chat.prompt(question).stream().content().filter(text -> !text.isEmpty());
  }
}
