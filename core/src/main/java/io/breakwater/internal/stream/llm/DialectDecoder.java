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
  sealed interface Step permits Chunk, Skip, Done, Failure {
    /** The event's parsed data, or {@code null} when it had none to parse (e.g. {@code [DONE]}). */
    JsonNode json();
  }

  /** Content to deliver. */
  record Chunk(LlmChunk chunk) implements Step {
    @Override
    public JsonNode json() {
      return chunk.json();
    }
  }

  /** Nothing to deliver (e.g. a role-only delta, {@code message_start}). */
  record Skip(JsonNode json) implements Step {}

  /** The dialect's terminal event. */
  record Done(JsonNode json) implements Step {}

  /** The server reported an error. */
  record Failure(LlmStreamException error, JsonNode json) implements Step {}

  private static final Done DONE = new Done(null);

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

  Dialect dialect() {
    return dialect;
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
          + abbreviate(event.data())), null);
    }
    if (dialect == Dialect.OPENAI_RESPONSES) {
      return responses(event, json);
    }
    if (event.event().equals("error") || json.hasNonNull("error")) {
      return new Failure(error(json), json);
    }
    return dialect == Dialect.OPENAI_CHAT ? openAi(event, json) : anthropic(event, json);
  }

  private Step responses(ServerSentEvent event, JsonNode json) {
    String type = json.path("type").asText(event.event());
    switch (type) {
      case "response.output_text.delta", "response.refusal.delta" -> {
        return new Chunk(new LlmChunk(json.path("delta").asText(""), json, type, event.id()));
      }
      case "response.function_call_arguments.delta", "response.output_item.done" -> {
        return new Chunk(new LlmChunk("", json, type, event.id()));
      }
      case "response.completed", "response.incomplete" -> {
        return new Done(json);
      }
      case "error" -> {
        return new Failure(new LlmStreamException(source, json.path("code").asText(json.path("type").asText("")),
            json.path("message").asText(abbreviate(json.toString()))), json);
      }
      case "response.failed" -> {
        JsonNode error = json.path("response").path("error");
        return new Failure(new LlmStreamException(source, error.path("code").asText(""),
            error.path("message").asText(abbreviate(json.toString()))), json);
      }
      default -> {
        return new Skip(json);
      }
    }
  }

  private Step openAi(ServerSentEvent event, JsonNode json) {
    JsonNode choice = json.path("choices").path(0);
    JsonNode delta = choice.path("delta");
    String text = delta.path("content").asText("");
    boolean content = !text.isEmpty() || delta.hasNonNull("tool_calls") || choice.hasNonNull("finish_reason")
        || json.hasNonNull("usage") && !json.path("usage").isEmpty();
    return content ? new Chunk(new LlmChunk(text, json, event.event(), event.id())) : new Skip(json);
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
            : new Skip(json);
      }
      case "message_delta" -> {
        return new Chunk(new LlmChunk("", json, event.event(), event.id()));
      }
      default -> {
        return new Skip(json); // message_start, content_block_stop, ping, unknown types
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
