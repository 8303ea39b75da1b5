package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.stream.llm.Citation;
import io.breakwater.stream.llm.FinishReason;
import io.breakwater.stream.llm.LlmDelta;
import java.util.function.UnaryOperator;

/**
 * OpenAI Responses: {@code response.created} (id, model, {@code background}), text, refusal, function-call and
 * reasoning deltas by output index, annotations, encrypted reasoning and other output items when done, and the
 * terminal events with their usage and status: {@code response.completed}, {@code response.incomplete}; errors as
 * {@code error} and {@code response.failed}. Every event's {@code sequence_number} is reported, so that a resumed
 * stream drops what it already processed.
 */
final class ResponsesDecoder extends DialectDecoder {

  private boolean background;
  private boolean functionCalls;

  ResponsesDecoder(ObjectMapper mapper, String source, UnaryOperator<String> mask) {
    super(mapper, source, mask);
  }

  /** Only a background response can be streamed again from a sequence number. */
  @Override
  boolean canResume() {
    return background && !responseId().isEmpty();
  }

  @Override
  void decode(String sseType, String data, Out out) {
    JsonNode json = parse(sseType, data, out);
    if (json == null) {
      return;
    }
    String type = text(json.get("type"));
    if (type.isEmpty()) {
      type = sseType;
    }
    int index = json.path("output_index").asInt(0);
    switch (type) {
      case "response.created", "response.in_progress", "response.queued" -> response(json.path("response"), out);
      case "response.output_text.delta" -> text(0, json, out, false);
      case "response.refusal.delta" -> text(0, json, out, true);
      case "response.reasoning_summary_text.delta", "response.reasoning_text.delta" -> {
        String t = text(json.get("delta"));
        if (!t.isEmpty()) {
          out.delta(new LlmDelta.Reasoning(0, t));
        }
      }
      case "response.function_call_arguments.delta" -> {
        String t = text(json.get("delta"));
        if (!t.isEmpty()) {
          out.delta(new LlmDelta.ToolCallArguments(0, index, t));
        }
      }
      case "response.output_item.added" -> {
        JsonNode item = json.path("item");
        if (text(item.get("type")).equals("function_call")) {
          functionCalls = true;
          out.delta(new LlmDelta.ToolCallStart(0, index, text(item.get("call_id")), text(item.get("name")), false));
          String arguments = text(item.get("arguments"));
          if (!arguments.isEmpty()) {
            out.delta(new LlmDelta.ToolCallArguments(0, index, arguments));
          }
        }
      }
      case "response.output_item.done" -> itemDone(json.path("item"), out);
      case "response.output_text.annotation.added" -> {
        JsonNode a = json.path("annotation");
        out.delta(new LlmDelta.CitationAdded(0, new Citation(text(a.get("url")), text(a.get("title")), "", a)));
      }
      case "response.completed", "response.incomplete" -> {
        JsonNode response = json.path("response");
        response(response, out);
        usage(response.path("usage"), out);
        if (type.equals("response.completed")) {
          out.delta(finish(0, "completed", functionCalls));
        } else {
          String reason = text(response.path("incomplete_details").get("reason"));
          String raw = reason.isEmpty() ? "incomplete" : reason;
          FinishReason mapped = FinishReason.of(raw);
          out.delta(new LlmDelta.Finish(0, mapped == FinishReason.OTHER || mapped == FinishReason.STOP
              ? FinishReason.LENGTH : mapped, raw));
        }
        out.terminal();
      }
      case "response.failed" -> {
        JsonNode response = json.path("response");
        usage(response.path("usage"), out);
        JsonNode error = response.path("error");
        out.fail(error.isObject() ? error(error) : error(json));
      }
      case "error" -> out.fail(error(json));
      default -> { } // framing: content parts, *.done, unknown types
    }
  }

  private void response(JsonNode response, Out out) {
    metadata(response.get("id"), response.get("model"), out);
    if (response.has("background")) {
      background = response.path("background").asBoolean(false);
    }
  }

  private static void text(int choice, JsonNode json, Out out, boolean refusal) {
    String t = text(json.get("delta"));
    if (!t.isEmpty()) {
      out.delta(refusal ? new LlmDelta.Refusal(choice, t) : new LlmDelta.Text(choice, t));
    }
  }

  private static void itemDone(JsonNode item, Out out) {
    String type = text(item.get("type"));
    switch (type) {
      case "message", "function_call" -> { } // delivered as deltas already
      case "reasoning" -> {
        String encrypted = text(item.get("encrypted_content"));
        if (!encrypted.isEmpty()) {
          out.delta(new LlmDelta.RedactedReasoning(0, encrypted));
        }
      }
      default -> out.delta(new LlmDelta.Output(0, type, item));
    }
  }

  private void usage(JsonNode usage, Out out) {
    if (usage.isObject()) {
      usage(count(usage.get("input_tokens")), count(usage.get("output_tokens")), count(usage.get("total_tokens")),
          count(usage.path("input_tokens_details").get("cached_tokens")),
          count(usage.path("output_tokens_details").get("reasoning_tokens")), out);
    }
  }
}
