package io.breakwater.examples.llm;

import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.StreamTruncatedException;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.FinishReason;
import io.breakwater.stream.llm.LlmCallEvent;
import io.breakwater.stream.llm.LlmDelta;
import io.breakwater.stream.llm.LlmIncompleteException;
import io.breakwater.stream.llm.LlmResponse;
import io.breakwater.stream.llm.LlmStreamClient;
import io.breakwater.stream.llm.LlmStreamException;
import io.breakwater.stream.llm.ToolCall;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import reactor.core.publisher.Mono;

/** The LLM client's snippets of {@code docs/stream.md}; {@code LlmStreamsIT} runs them against loopback servers. */
public final class LlmStreams {

  private LlmStreams() {}

  /** The whole answer: its text, or the tools the model wants run. */
  // snippet:stream-llm-aggregate
  public static Mono<String> answer(LlmStreamClient client, Object request) {
    Mono<String> answer = client.stream(request)
        .as(LlmResponse::aggregate)                                  // text, tool calls, usage, finish reason
        .map(response -> response.finishReason() == FinishReason.TOOL_CALLS
            ? "run " + response.toolCalls().stream().map(ToolCall::name).toList()
            : response.text());
    return answer;
  }
  // end-snippet

  /** Each fragment of text to the user as it arrives, and the whole answer at the end, from one call. */
  // snippet:stream-llm-one-pass
  public static Mono<LlmResponse> showAndKeep(LlmStreamClient client, Object request, Consumer<String> show) {
    Mono<LlmResponse> answer = client.streamAndAggregate(request, delta -> {
      if (delta instanceof LlmDelta.Text t) {
        show.accept(t.text());                                     // every fragment, in order, as it arrives
      }
    });                                                            // then the assembled response: one request
    return answer;
  }
  // end-snippet

  /** Every way a call can end, handled by type. */
  // snippet:stream-llm-errors
  public static Mono<String> answerOrExplain(LlmStreamClient client, Object request) {
    Mono<String> answer = client.stream(request)
        .as(LlmResponse::aggregate)
        .map(LlmResponse::text)
        .onErrorResume(LlmIncompleteException.class,                 // it ended, but a token limit cut the answer
            e -> Mono.just(e.response().text() + " [cut: " + e.response().finishReason() + "]"))
        .onErrorResume(LlmStreamException.class,                     // the server's error event, before the first
            e -> Mono.just(e.partialResponse().text() + " [server: " + e.errorType() + "]"))   // token or after it
        .onErrorResume(TimeoutException.class,                       // no first token in time, or a stall after it
            e -> Mono.just(LlmResponse.partialOf(e).map(LlmResponse::text).orElse("") + " [timed out]"))
        .onErrorResume(StreamTruncatedException.class,               // the connection dropped after content
            e -> Mono.just(e.partialOutput() + " [cut off]"));
    return answer;
  }
  // end-snippet

  /** Clients for the other dialects. */
  // snippet:stream-llm-providers
  public static List<LlmStreamClient> providers(String baseUrl, String key) {
    LlmStreamClient claude = LlmStreamClient.builder(baseUrl, Dialect.ANTHROPIC_MESSAGES)   // /v1/messages
        .header("x-api-key", key).header("anthropic-version", "2023-06-01")
        .build();
    LlmStreamClient gemini = LlmStreamClient.builder(baseUrl, Dialect.GEMINI)   // the model is in the path
        .path("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
        .header("x-goog-api-key", key)
        .build();
    LlmStreamClient responses = LlmStreamClient.builder(baseUrl, Dialect.OPENAI_RESPONSES)   // /v1/responses
        .header("Authorization", "Bearer " + key)
        .build();
    LlmStreamClient ollama = LlmStreamClient.builder(baseUrl, Dialect.OLLAMA)   // /api/chat, NDJSON
        .build();
    LlmStreamClient vllm = LlmStreamClient.builder(baseUrl, Dialect.OPENAI_CHAT)   // any compatible server
        .includeUsage(false)                      // if it rejects stream_options
        .build();
    return List.of(claude, gemini, responses, ollama, vllm);
  }
  // end-snippet

  /** A client tuned for a reasoning model, reporting each call. */
  // snippet:stream-llm-tuned
  public static LlmStreamClient tuned(String baseUrl, Consumer<LlmCallEvent> calls) {
    LlmStreamClient client = LlmStreamClient.builder(baseUrl, Dialect.OPENAI_CHAT)
        .timeouts(StreamTimeouts.builder()
            .firstItem(Duration.ofSeconds(45))     // a reasoning model may think before its first token
            .idle(Duration.ofSeconds(5))           // then content must keep coming
            .build())
        .retry(RetryPolicy.builder().name("openai").maxRetries(2).build())   // retries and resumes, one budget
        .maxDuration(Duration.ofMinutes(5))
        .callListener(calls)                       // attempts, time to first token, usage, outcome per call
        .build();
    return client;
  }
  // end-snippet
}
