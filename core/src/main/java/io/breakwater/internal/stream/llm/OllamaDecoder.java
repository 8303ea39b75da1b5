package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.stream.llm.LlmDelta;
import java.util.function.UnaryOperator;

/**
 * Ollama's native API, one JSON object per line: {@code /api/chat} ({@code message.content},
 * {@code message.thinking}, whole {@code message.tool_calls}) and {@code /api/generate} ({@code response},
 * {@code thinking}); the last line has {@code "done": true}, the {@code done_reason} and the counts; an error is
 * {@code {"error": "..."}}.
 */
final class OllamaDecoder extends DialectDecoder {

  private int calls;

  OllamaDecoder(ObjectMapper mapper, String source, UnaryOperator<String> mask) {
    super(mapper, source, mask);
  }

  @Override
  void decode(String type, String data, Out out) {
    JsonNode json = parseUnlessError(type, data, out);
    if (json == null) {
      return;
    }
    metadata(null, json.get("model"), out);
    JsonNode message = json.path("message");
    text(message.get("content"), false, out);
    text(message.get("thinking"), true, out);
    text(json.get("response"), false, out);
    text(json.get("thinking"), true, out);
    for (JsonNode call : message.path("tool_calls")) {
      JsonNode function = call.path("function");
      int index = calls++;
      out.delta(new LlmDelta.ToolCallStart(0, index, text(call.get("id")), text(function.get("name")), false));
      JsonNode args = function.get("arguments");
      out.delta(new LlmDelta.ToolCallArguments(0, index, args == null || args.isNull() ? "{}"
          : args.isTextual() ? args.asText() : args.toString()));
    }
    if (json.path("done").asBoolean(false)) {
      long input = count(json.get("prompt_eval_count"));
      long output = count(json.get("eval_count"));
      usage(input, output, -1, -1, -1, out);
      String reason = text(json.get("done_reason"));
      out.delta(finish(0, reason.isEmpty() ? "stop" : reason, calls > 0));
      out.terminal();
    }
  }

  private static void text(JsonNode node, boolean reasoning, Out out) {
    String t = text(node);
    if (!t.isEmpty()) {
      out.delta(reasoning ? new LlmDelta.Reasoning(0, t) : new LlmDelta.Text(0, t));
    }
  }
}
