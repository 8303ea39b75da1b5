package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.stream.ServerSentEvent;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.LlmChunk;
import io.breakwater.stream.llm.LlmStreamException;
import java.io.IOException;

/** Turns the server-sent events of one dialect into chunks, errors and the terminal signal. Stateless. */
final class DialectDecoder {

  /** What one event means. */
  sealed interface Step permits Chunk, Skip, Done, Failure {}

  /** Content to deliver. */
  record Chunk(LlmChunk chunk) implements Step {}

  /** Nothing to deliver (e.g. a role-only delta, {@code message_start}). */
  record Skip() implements Step {}

  /** The dialect's terminal event. */
  record Done() implements Step {}

  /** The server reported an error. */
  record Failure(LlmStreamException error) implements Step {}

  private static final Skip SKIP = new Skip();
  private static final Done DONE = new Done();

  private final Dialect dialect;
  private final ObjectMapper mapper;
  private final String source;

  DialectDecoder(Dialect dialect, ObjectMapper mapper) {
    this.dialect = dialect;
    this.mapper = mapper;
    this.source = "llm:" + dialect.name().toLowerCase(java.util.Locale.ROOT);
  }

  String source() {
    return source;
  }

  Step decode(ServerSentEvent event) {
    if (dialect == Dialect.OPENAI_CHAT && event.data().equals("[DONE]")) {
      return DONE;
    }
    if (dialect == Dialect.ANTHROPIC_MESSAGES && event.event().equals("message_stop")) {
      return DONE;
    }
    JsonNode json;
    try {
      json = mapper.readTree(event.data());
    } catch (IOException e) {
      return new Failure(new LlmStreamException(source, "invalid_json", "unparseable event data: "
          + abbreviate(event.data())));
    }
    if (event.event().equals("error") || json.hasNonNull("error")) {
      return new Failure(error(json));
    }
    return dialect == Dialect.OPENAI_CHAT ? openAi(event, json) : anthropic(event, json);
  }

  private Step openAi(ServerSentEvent event, JsonNode json) {
    JsonNode choice = json.path("choices").path(0);
    JsonNode delta = choice.path("delta");
    String text = delta.path("content").asText("");
    boolean content = !text.isEmpty() || delta.hasNonNull("tool_calls") || choice.hasNonNull("finish_reason")
        || json.hasNonNull("usage") && !json.path("usage").isEmpty();
    return content ? new Chunk(new LlmChunk(text, json, event.event(), event.id())) : SKIP;
  }

  private Step anthropic(ServerSentEvent event, JsonNode json) {
    switch (event.event()) {
      case "content_block_delta" -> {
        JsonNode delta = json.path("delta");
        String text = delta.path("text").asText(delta.path("partial_json").asText(""));
        return new Chunk(new LlmChunk(text, json, event.event(), event.id()));
      }
      case "content_block_start" -> {
        return json.path("content_block").path("type").asText().equals("tool_use")
            ? new Chunk(new LlmChunk("", json, event.event(), event.id()))
            : SKIP;
      }
      case "message_delta" -> {
        return new Chunk(new LlmChunk("", json, event.event(), event.id()));
      }
      default -> {
        return SKIP; // message_start, content_block_stop, ping, unknown types
      }
    }
  }

  private LlmStreamException error(JsonNode json) {
    JsonNode error = json.has("error") ? json.path("error") : json;
    String type = error.isTextual() ? "" : error.path("type").asText(error.path("code").asText(""));
    String message = error.isTextual() ? error.asText() : error.path("message").asText(abbreviate(json.toString()));
    return new LlmStreamException(source, type, message);
  }

  static String abbreviate(String s) {
    return s.length() <= 200 ? s : s.substring(0, 200) + "…";
  }
}
