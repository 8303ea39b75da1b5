package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.stream.llm.Citation;
import io.breakwater.stream.llm.LlmDelta;
import java.util.function.UnaryOperator;

/**
 * Anthropic Messages: {@code message_start} (id, model, input usage), content blocks by index ({@code text},
 * {@code tool_use} and {@code server_tool_use} with their {@code input_json_delta}s, {@code thinking} with its
 * {@code signature_delta}, {@code redacted_thinking}, citations; other blocks such as
 * {@code web_search_tool_result} whole), {@code message_delta} (stop reason, cumulative usage), {@code message_stop}.
 */
final class AnthropicDecoder extends DialectDecoder {

  AnthropicDecoder(ObjectMapper mapper, String source, UnaryOperator<String> mask) {
    super(mapper, source, mask);
  }

  @Override
  void decode(String sseType, String data, Out out) {
    if (sseType.equals("message_stop")) {
      out.terminal();
      return;
    }
    JsonNode json = parse(sseType, data, out);
    if (json == null) {
      return;
    }
    String type = sseType.equals("message") ? text(json.get("type")) : sseType;
    switch (type) {
      case "message_start" -> {
        JsonNode message = json.path("message");
        metadata(message.get("id"), message.get("model"), out);
        usage(message.path("usage"), out);
      }
      case "content_block_start" -> blockStart(json.path("index").asInt(0), json.path("content_block"), out);
      case "content_block_delta" -> blockDelta(json.path("index").asInt(0), json.path("delta"), out);
      case "message_delta" -> {
        usage(json.path("usage"), out);
        String stop = text(json.path("delta").get("stop_reason"));
        if (!stop.isEmpty()) {
          out.delta(finish(0, stop, false));
        }
      }
      case "message_stop" -> out.terminal();
      case "error" -> out.fail(error(json));
      default -> {
        if (json.hasNonNull("error")) {
          out.fail(error(json));
        }
        // content_block_stop, ping and unknown types carry nothing to deliver
      }
    }
  }

  private void usage(JsonNode usage, Out out) {
    if (usage.isObject()) {
      usage(count(usage.get("input_tokens")), count(usage.get("output_tokens")), -1,
          count(usage.get("cache_read_input_tokens")),
          count(usage.path("output_tokens_details").get("thinking_tokens")), out);
    }
  }

  private static void blockStart(int index, JsonNode block, Out out) {
    String type = text(block.get("type"));
    switch (type) {
      case "text" -> {
        String t = text(block.get("text"));
        if (!t.isEmpty()) {
          out.delta(new LlmDelta.Text(0, t));
        }
      }
      case "tool_use", "server_tool_use", "mcp_tool_use" -> {
        out.delta(new LlmDelta.ToolCallStart(0, index, text(block.get("id")), text(block.get("name")),
            !type.equals("tool_use")));
        JsonNode input = block.get("input");
        if (input != null && input.isObject() && !input.isEmpty()) {
          out.delta(new LlmDelta.ToolCallArguments(0, index, input.toString()));
        }
      }
      case "thinking" -> {
        String t = text(block.get("thinking"));
        if (!t.isEmpty()) {
          out.delta(new LlmDelta.Reasoning(0, t));
        }
        String signature = text(block.get("signature"));
        if (!signature.isEmpty()) {
          out.delta(new LlmDelta.ReasoningSignature(0, signature));
        }
      }
      case "redacted_thinking" -> out.delta(new LlmDelta.RedactedReasoning(0, text(block.get("data"))));
      default -> out.delta(new LlmDelta.Output(0, type, block));
    }
  }

  private static void blockDelta(int index, JsonNode delta, Out out) {
    switch (text(delta.get("type"))) {
      case "text_delta" -> {
        String t = text(delta.get("text"));
        if (!t.isEmpty()) {
          out.delta(new LlmDelta.Text(0, t));
        }
      }
      case "input_json_delta" -> {
        String json = text(delta.get("partial_json"));
        if (!json.isEmpty()) {
          out.delta(new LlmDelta.ToolCallArguments(0, index, json));
        }
      }
      case "thinking_delta" -> {
        String t = text(delta.get("thinking"));
        if (!t.isEmpty()) {
          out.delta(new LlmDelta.Reasoning(0, t));
        }
      }
      case "signature_delta" -> {
        String signature = text(delta.get("signature"));
        if (!signature.isEmpty()) {
          out.delta(new LlmDelta.ReasoningSignature(0, signature));
        }
      }
      case "citations_delta" -> {
        JsonNode c = delta.path("citation");
        out.delta(new LlmDelta.CitationAdded(0, new Citation(text(c.get("url")), text(c.get("title")),
            text(c.get("cited_text")), c)));
      }
      default -> { } // unknown delta types carry nothing this client models
    }
  }
}
