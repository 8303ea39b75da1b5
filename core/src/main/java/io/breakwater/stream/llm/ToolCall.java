package io.breakwater.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A complete tool call of an assembled {@link LlmResponse}: its arguments joined from their streamed fragments and
 * parsed.
 *
 * <pre>{@code
 * for (ToolCall call : response.toolCalls()) {
 *   String city = call.arguments().path("city").asText();
 * }
 * }</pre>
 *
 * @param index the call's index in its stream (the tool-call index, the content block or the output item)
 * @param id the call's id ({@code call_…}, {@code toolu_…}); {@code ""} when the server gives none (Gemini,
 *     Ollama)
 * @param name the tool's name
 * @param arguments the arguments parsed as JSON ({@code {}} when none were sent), or {@code null} when they are not
 *     valid JSON (e.g. cut by a token limit): read {@link #argumentsJson()} then
 * @param argumentsJson the arguments as the model wrote them
 * @param serverSide whether the server ran the tool itself (Anthropic {@code server_tool_use}, e.g. web search):
 *     such calls are listed in {@link LlmChoice#serverToolCalls()}, not for the caller to run
 */
public record ToolCall(int index, String id, String name, @Nullable JsonNode arguments, String argumentsJson,
    boolean serverSide) {

  public ToolCall {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(argumentsJson, "argumentsJson");
  }
}
