package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.stream.llm.Citation;
import io.breakwater.stream.llm.FinishReason;
import io.breakwater.stream.llm.LlmDelta;
import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Google Gemini {@code streamGenerateContent?alt=sse} (the Gemini API and Vertex AI): candidates with parts
 * ({@code text}, {@code thought: true} text as reasoning, {@code thoughtSignature}, whole {@code functionCall}s,
 * anything else whole), {@code citationMetadata}, {@code finishReason}, {@code usageMetadata} (each chunk's replaces
 * the last), a blocked prompt's {@code promptFeedback}. There is no terminal event: the body ends after the chunk
 * that carries the finish reason.
 */
final class GeminiDecoder extends DialectDecoder {

  /** Per candidate: how many function calls it made (their indexes), and whether it finished. */
  private final Map<Integer, Integer> calls = new HashMap<>(2);
  private boolean finished;

  GeminiDecoder(ObjectMapper mapper, String source, UnaryOperator<String> mask) {
    super(mapper, source, mask);
  }

  @Override
  boolean endIsTerminal() {
    return finished;
  }

  @Override
  void decode(String type, String data, Out out) {
    JsonNode json = parseUnlessError(type, data, out);
    if (json == null) {
      return;
    }
    metadata(json.get("responseId"), json.get("modelVersion"), out);
    JsonNode candidates = json.path("candidates");
    for (int i = 0; i < candidates.size(); i++) {
      candidate(candidates.get(i), i, out);
    }
    String blocked = text(json.path("promptFeedback").get("blockReason"));
    if (!blocked.isEmpty() && candidates.isEmpty()) {
      finished = true;
      out.delta(new LlmDelta.Finish(0, FinishReason.CONTENT_FILTER, blocked));
    }
    JsonNode usage = json.get("usageMetadata");
    if (usage != null && usage.isObject()) {
      usage(count(usage.get("promptTokenCount")), count(usage.get("candidatesTokenCount")),
          count(usage.get("totalTokenCount")), count(usage.get("cachedContentTokenCount")),
          count(usage.get("thoughtsTokenCount")), out);
    }
  }

  private void candidate(JsonNode candidate, int position, Out out) {
    int index = candidate.path("index").canConvertToInt() ? Math.max(0, candidate.path("index").asInt()) : position;
    for (JsonNode part : candidate.path("content").path("parts")) {
      part(index, part, out);
    }
    for (JsonNode c : candidate.path("citationMetadata").path("citations")) {
      out.delta(new LlmDelta.CitationAdded(index, new Citation(text(c.get("uri")), text(c.get("title")), "", c)));
    }
    String finish = text(candidate.get("finishReason"));
    if (!finish.isEmpty()) {
      finished = true;
      out.delta(finish(index, finish, calls.getOrDefault(index, 0) > 0));
    }
  }

  private void part(int index, JsonNode part, Out out) {
    if (part.has("text")) {
      String t = text(part.get("text"));
      if (!t.isEmpty()) {
        out.delta(part.path("thought").asBoolean(false) ? new LlmDelta.Reasoning(index, t)
            : new LlmDelta.Text(index, t));
      }
    } else if (part.has("functionCall")) {
      JsonNode call = part.path("functionCall");
      int n = calls.merge(index, 1, Integer::sum) - 1;
      out.delta(new LlmDelta.ToolCallStart(index, n, text(call.get("id")), text(call.get("name")), false));
      JsonNode args = call.get("args");
      out.delta(new LlmDelta.ToolCallArguments(index, n, args == null || args.isNull() ? "{}" : args.toString()));
    } else if (!part.has("thoughtSignature") || part.size() > 1) {
      String type = part.fieldNames().hasNext() ? part.fieldNames().next() : "part";
      out.delta(new LlmDelta.Output(index, type, part));
    }
    String signature = text(part.get("thoughtSignature"));
    if (!signature.isEmpty()) {
      out.delta(new LlmDelta.ReasoningSignature(index, signature));
    }
  }
}
