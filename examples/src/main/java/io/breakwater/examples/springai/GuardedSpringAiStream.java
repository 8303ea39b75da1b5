package io.breakwater.examples.springai;

import static io.breakwater.Breakwater.streamTimeouts;
import static io.breakwater.Breakwater.withDeadline;

import io.breakwater.stream.StreamTimeouts;
import java.time.Duration;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import reactor.core.publisher.Flux;

/**
 * Breakwater's stream operators around a third-party streaming client: Spring AI's {@link OpenAiChatModel} (on the
 * official OpenAI Java SDK and OkHttp), pointed at any OpenAI-compatible server.
 *
 * <p>The client's own timeout is on socket reads, so a server that stalls but keeps sending SSE heartbeats keeps the
 * stream alive forever. The heartbeats never reach the {@code Flux}, so Breakwater's progress clock sees the stall,
 * and {@link CancellableStreams} makes the cancellation close the stream's connection:
 *
 * <pre>{@code
 * CancellableStreams streams = new CancellableStreams();
 * OpenAiChatModel model = GuardedSpringAiStream.model("https://api.example.com/v1", "gpt-4o-mini", streams);
 * Flux<String> tokens = new GuardedSpringAiStream(model, streams, timeouts, Duration.ofSeconds(60))
 *     .tokens("Plan a trip to Lyon");
 * }</pre>
 */
// snippet:cookbook-spring-ai-tokens
public final class GuardedSpringAiStream {

  private final OpenAiChatModel model;
  private final CancellableStreams streams;
  private final StreamTimeouts timeouts;
  private final Duration taskBudget;

  /** A guard for {@code model}, which must have been built with {@code streams.customizer()}. */
  public GuardedSpringAiStream(OpenAiChatModel model, CancellableStreams streams, StreamTimeouts timeouts,
      Duration taskBudget) {
    this.model = model;
    this.streams = streams;
    this.timeouts = timeouts;
    this.taskBudget = taskBudget;
  }

  /** A Spring AI chat model for the OpenAI-compatible server at {@code baseUrl} (e.g. {@code http://host:port/v1}). */
  public static OpenAiChatModel model(String baseUrl, String modelName, CancellableStreams streams) {
    return OpenAiChatModel.builder()
        .options(OpenAiChatOptions.builder()
            .baseUrl(baseUrl)
            .apiKey("not-needed-locally")
            .model(modelName)
            .maxRetries(0)                      // retries belong to the caller, who knows what was delivered
            .timeout(Duration.ofMinutes(5))     // the SDK's socket timeout: heartbeats keep resetting it anyway
            .build())
        .httpClientBuilderCustomizer(streams.customizer())   // a cancelled stream cancels its HTTP call
        .build();
  }

  /** The answer's text, token by token: a first token within the first-item timeout, then no stall longer than idle. */
  public Flux<String> tokens(String question) {
    return streams.stream(model, new Prompt(question))   // cancelling it closes the connection
        .map(GuardedSpringAiStream::text)
        .filter(text -> !text.isEmpty())
        .transformDeferred(streamTimeouts(timeouts))      // first token, then no stall longer than idle
        .transformDeferred(withDeadline(taskBudget));
  }

  private static String text(ChatResponse response) {
    if (response.getResult() == null || response.getResult().getOutput() == null) {
      return "";
    }
    String text = response.getResult().getOutput().getText();
    return text == null ? "" : text;
  }
}
// end-snippet
