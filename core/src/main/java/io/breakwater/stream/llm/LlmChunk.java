package io.breakwater.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;

/**
 * One piece of a streamed LLM response, as delivered by {@link LlmStreamClient#stream(Object)}: the text it adds
 * (possibly empty, e.g. for a tool-call delta or a finish reason), the event's JSON as the server sent it, the SSE
 * event type and the SSE id in force.
 *
 * <pre>{@code
 * String answer = client.stream(request).map(LlmChunk::text).collect(Collectors.joining()).block();
 * }</pre>
 *
 * @param text the text this chunk adds; {@code ""} if none
 * @param json the event's parsed data
 * @param event the SSE event type ({@code "message"} for OpenAI chat)
 * @param id the SSE last event id in force ({@code ""} if the server sends none)
 */
public record LlmChunk(String text, JsonNode json, String event, String id) {

  public LlmChunk {
    Objects.requireNonNull(text, "text");
    Objects.requireNonNull(json, "json");
    Objects.requireNonNull(event, "event");
    Objects.requireNonNull(id, "id");
  }
}
