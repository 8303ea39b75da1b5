package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.*;

import io.breakwater.stream.ServerSentEvent;
import io.breakwater.stream.ServerSentEvents;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.LlmDelta;
import io.breakwater.stream.llm.LlmStreamClient;
import io.netty.buffer.ByteBuf;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;

/** The snippets of {@code docs/stream.md}; {@code StreamsIT} runs them against a loopback SSE server. */
public final class Streams {

  private Streams() {}

  // snippet:stream-llm-client
  public static LlmStreamClient client(String baseUrl, String key) {
    LlmStreamClient client = LlmStreamClient.builder(baseUrl, Dialect.OPENAI_CHAT)   // e.g. http://127.0.0.1:8000
        .header("Authorization", "Bearer " + key)
        .build();                                   // share it: it is immutable and thread-safe
    return client;
  }
  // end-snippet

  // snippet:stream-llm-tokens
  public static Flux<String> tokens(LlmStreamClient client) {
    Flux<String> tokens = client.stream(Map.of("model", "gpt-4o-mini",
            "messages", List.of(Map.of("role", "user", "content", "Plan a trip to Lyon"))))
        .ofType(LlmDelta.Text.class).map(LlmDelta.Text::text)       // typed deltas: text, tool calls, reasoning, ..
        .transformDeferred(withDeadline(Duration.ofSeconds(60)));   // first-token and idle budgets derive from it
    return tokens;
  }
  // end-snippet

  /** Any SSE body, decoded and timed by its progress. */
  // snippet:stream-timeouts
  public static Flux<String> data(Flux<ByteBuf> body) {
    Flux<ServerSentEvent> events = ServerSentEvents.decode(body)     // body: the HTTP body, a Flux<ByteBuf>
        .transformDeferred(idleTimeout(Duration.ofSeconds(3), e -> !e.isHeartbeat()));  // pings are no progress

    Flux<String> data = events.filter(e -> !e.isHeartbeat()).map(ServerSentEvent::data)
        .transformDeferred(streamTimeouts(StreamTimeouts.builder()
            .firstItem(Duration.ofSeconds(30)).idle(Duration.ofSeconds(3)).build()));
    return data;
  }
  // end-snippet
}
