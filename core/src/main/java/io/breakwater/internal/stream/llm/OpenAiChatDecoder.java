package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.stream.llm.Citation;
import io.breakwater.stream.llm.LlmDelta;
import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * OpenAI chat completions and the servers compatible with it. Deviations handled: role-only and empty deltas
 * (framing), {@code choices: []} usage chunks and usage inside the finish chunk, Groq's {@code x_groq.usage},
 * DeepSeek's {@code reasoning_content}, Groq's and OpenRouter's {@code reasoning} (and OpenRouter's
 * {@code reasoning_details} signatures), Mistral's {@code content} arrays with thinking chunks, {@code annotations}
 * ({@code url_citation}s of OpenAI web search and OpenRouter) as citations, whole tool calls in
 * one delta, tool calls without an index, in-band {@code "error"} objects after content, the legacy
 * {@code choices[].text} of {@code /v1/completions}.
 */
final class OpenAiChatDecoder extends DialectDecoder {

  /** The tool calls started, by (choice, index); the number started per choice (for calls without an index). */
  private @Nullable Map<Long, Boolean> startedCalls;
  private @Nullable Map<Integer, Integer> callsPerChoice;

  OpenAiChatDecoder(ObjectMapper mapper, String source, UnaryOperator<String> mask) {
    super(mapper, source, mask);
  }

  @Override
  void decode(String type, String data, Out out) {
    if (data.equals("[DONE]")) {
      out.terminal();
      return;
    }
    JsonNode json = parse(type, data, out);
    if (json == null) {
      return;
    }
    metadata(json.get("id"), json.get("model"), out);
    JsonNode choices = json.path("choices");
    for (int i = 0; i < choices.size(); i++) {
      choice(choices.get(i), i, out);
    }
    JsonNode usage = json.get("usage");
    if (usage == null || !usage.isObject()) {
      usage = json.path("x_groq").get("usage");
    }
    if (usage != null && usage.isObject()) {
      JsonNode cached = usage.path("prompt_tokens_details").get("cached_tokens");
      usage(count(usage.get("prompt_tokens")), count(usage.get("completion_tokens")),
          count(usage.get("total_tokens")),
          cached != null ? count(cached) : count(usage.get("prompt_cache_hit_tokens")),
          count(usage.path("completion_tokens_details").get("reasoning_tokens")), out);
    }
    if (type.equals("error") || json.hasNonNull("error")) {
      out.fail(error(json));
    }
  }

  private void choice(JsonNode choice, int position, Out out) {
    int index = choice.path("index").canConvertToInt() ? Math.max(0, choice.path("index").asInt()) : position;
    JsonNode delta = choice.path("delta");
    content(index, delta.get("content"), out);
    String legacy = text(choice.get("text"));
    if (!legacy.isEmpty()) {
      out.delta(new LlmDelta.Text(index, legacy));
    }
    String refusal = text(delta.get("refusal"));
    if (!refusal.isEmpty()) {
      out.delta(new LlmDelta.Refusal(index, refusal));
    }
    reasoning(index, delta, out);
    for (JsonNode annotation : delta.path("annotations")) {
      citation(index, annotation, out);
    }
    JsonNode calls = delta.path("tool_calls");
    for (int i = 0; i < calls.size(); i++) {
      toolCall(index, calls.get(i), out);
    }
    JsonNode finish = choice.get("finish_reason");
    if (finish != null && finish.isTextual() && !finish.asText().isEmpty()) {
      out.delta(finish(index, finish.asText(), false));
    }
  }

  /** A string, or an array of parts ({@code text}, Mistral {@code thinking} with nested text parts). */
  private static void content(int index, JsonNode content, Out out) {
    if (content == null) {
      return;
    }
    if (content.isTextual()) {
      if (!content.asText().isEmpty()) {
        out.delta(new LlmDelta.Text(index, content.asText()));
      }
      return;
    }
    for (JsonNode part : content) {
      String type = text(part.get("type"));
      if (type.equals("thinking")) {
        for (JsonNode thought : part.path("thinking")) {
          String t = text(thought.get("text"));
          if (!t.isEmpty()) {
            out.delta(new LlmDelta.Reasoning(index, t));
          }
        }
      } else if (type.equals("text") || part.has("text")) {
        String t = text(part.get("text"));
        if (!t.isEmpty()) {
          out.delta(new LlmDelta.Text(index, t));
        }
      }
    }
  }

  /**
   * DeepSeek {@code reasoning_content}, else {@code reasoning}, else the text of OpenRouter's
   * {@code reasoning_details} (which repeat {@code reasoning}); their signatures either way.
   */
  private static void reasoning(int index, JsonNode delta, Out out) {
    String text = text(delta.get("reasoning_content"));
    if (text.isEmpty()) {
      text = text(delta.get("reasoning"));
    }
    boolean fromDetails = text.isEmpty();
    if (!text.isEmpty()) {
      out.delta(new LlmDelta.Reasoning(index, text));
    }
    for (JsonNode detail : delta.path("reasoning_details")) {
      String type = text(detail.get("type"));
      if (fromDetails && type.equals("reasoning.text")) {
        String t = text(detail.get("text"));
        if (!t.isEmpty()) {
          out.delta(new LlmDelta.Reasoning(index, t));
        }
      } else if (type.equals("reasoning.encrypted")) {
        String data = text(detail.get("data"));
        if (!data.isEmpty()) {
          out.delta(new LlmDelta.RedactedReasoning(index, data));
        }
      }
      String signature = text(detail.get("signature"));
      if (!signature.isEmpty()) {
        out.delta(new LlmDelta.ReasoningSignature(index, signature));
      }
    }
  }

  /** An annotation: {@code url_citation} (OpenAI web search, OpenRouter) and others that name a URL or a title. */
  private static void citation(int index, JsonNode annotation, Out out) {
    String type = text(annotation.get("type"));
    JsonNode body = type.isEmpty() || !annotation.path(type).isObject() ? annotation : annotation.path(type);
    String url = text(body.get("url"));
    String title = text(body.get("title"));
    if (!url.isEmpty() || !title.isEmpty()) {
      out.delta(new LlmDelta.CitationAdded(index, new Citation(url, title, text(body.get("content")), annotation)));
    }
  }

  private void toolCall(int choice, JsonNode call, Out out) {
    String id = text(call.get("id"));
    JsonNode function = call.path("function");
    String name = text(function.get("name"));
    int index;
    if (call.path("index").canConvertToInt()) {
      index = call.path("index").asInt();
    } else {
      // no index: a call with an id or a name is a new one, fragments continue the last
      int started = started(choice);
      index = !id.isEmpty() || !name.isEmpty() ? started : Math.max(0, started - 1);
    }
    long key = ((long) choice << 32) | (index & 0xffffffffL);
    if (startedCalls == null) {
      startedCalls = new HashMap<>(4);
    }
    if (startedCalls.putIfAbsent(key, Boolean.TRUE) == null) {
      countStarted(choice);
      out.delta(new LlmDelta.ToolCallStart(choice, index, id, name, false));
    }
    JsonNode arguments = function.get("arguments");
    String fragment = arguments == null || arguments.isNull() ? ""
        : arguments.isTextual() ? arguments.asText() : arguments.toString();
    if (!fragment.isEmpty()) {
      out.delta(new LlmDelta.ToolCallArguments(choice, index, fragment));
    }
  }

  private int started(int choice) {
    return callsPerChoice == null ? 0 : callsPerChoice.getOrDefault(choice, 0);
  }

  private void countStarted(int choice) {
    if (callsPerChoice == null) {
      callsPerChoice = new HashMap<>(4);
    }
    callsPerChoice.merge(choice, 1, Integer::sum);
  }
}
