package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.stream.llm.Citation;
import io.breakwater.stream.llm.FinishReason;
import io.breakwater.stream.llm.LlmDelta;
import io.breakwater.stream.llm.LlmStreamException;
import io.netty.buffer.ByteBuf;
import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * Google Gemini {@code streamGenerateContent?alt=sse} (the Gemini API and Vertex AI): candidates with parts
 * ({@code text}, {@code thought: true} text as reasoning, {@code thoughtSignature}, whole {@code functionCall}s and
 * Vertex's streamed ones ({@code partialArgs}), anything else whole), {@code citationMetadata} ({@code citations} or
 * {@code citationSources}), {@code finishReason}, {@code usageMetadata} (each chunk's replaces the last), a blocked
 * prompt's {@code promptFeedback}. There is no terminal event: the body ends after the chunk that carries the finish
 * reason.
 */
final class GeminiDecoder extends DialectDecoder {

  /** Per candidate: how many function calls it made (their indexes), and whether it finished. */
  private final Map<Integer, Integer> calls = new HashMap<>(2);
  /** Per candidate: the call whose streamed arguments are still coming. */
  private final Map<Integer, StreamedCall> streamed = new HashMap<>(2);
  private boolean finished;
  /** A part could not be read: the stream has failed, and what follows in its event is ignored. */
  private boolean failed;

  GeminiDecoder(ObjectMapper mapper, String source, UnaryOperator<String> mask) {
    super(mapper, source, mask);
  }

  /**
   * The body, failing at once when it is a JSON array: what {@code streamGenerateContent} sends without
   * {@code alt=sse}. The same request would get the same answer, so the error is not retried.
   */
  static Flux<ByteBuf> eventStreamOnly(Flux<ByteBuf> body, String source) {
    return Flux.defer(() -> {
      boolean[] checked = {false};
      return body.handle((buffer, sink) -> {
        for (int i = buffer.readerIndex(); !checked[0] && i < buffer.writerIndex(); i++) {
          byte b = buffer.getByte(i);
          if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
            checked[0] = true;
            if (b == '[') {
              sink.error(new LlmStreamException(source, "invalid_request", "json_array_body", "The response is a "
                  + "JSON array, not server-sent events: add alt=sse to the path, e.g. "
                  + "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"));
              return;
            }
          }
        }
        sink.next(buffer);
      });
    });
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
    for (int i = 0; i < candidates.size() && !failed; i++) {
      candidate(candidates.get(i), i, out);
    }
    if (failed) {
      return;
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
      if (failed) {
        return;
      }
    }
    // Vertex AI names them citations, the Gemini API citationSources
    JsonNode metadata = candidate.path("citationMetadata");
    for (JsonNode c : metadata.has("citations") ? metadata.path("citations") : metadata.path("citationSources")) {
      out.delta(new LlmDelta.CitationAdded(index, new Citation(text(c.get("uri")), text(c.get("title")), "", c)));
    }
    String finish = text(candidate.get("finishReason"));
    if (!finish.isEmpty()) {
      StreamedCall open = streamed.get(index);
      if (open != null) {
        invalidCall("the candidate finished (" + finish + ") with streamed call " + open.index + " still open",
            candidate.path("content"), out);
        return;
      }
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
      functionCall(index, part.path("functionCall"), out);
      if (failed) {
        return;
      }
    } else if (!part.has("thoughtSignature") || part.size() > 1) {
      String type = part.fieldNames().hasNext() ? part.fieldNames().next() : "part";
      out.delta(new LlmDelta.Output(index, type, part));
    }
    String signature = text(part.get("thoughtSignature"));
    if (!signature.isEmpty()) {
      out.delta(new LlmDelta.ReasoningSignature(index, signature));
    }
  }

  /**
   * A whole call ({@code name} and {@code args}), or a part of one Vertex streams: it opens with {@code name} and
   * {@code willContinue: true}, its {@code partialArgs} follow, and a part without {@code willContinue} (often an empty
   * {@code functionCall: {}}) closes it. A part that fits neither fails the stream: no call is guessed.
   */
  private void functionCall(int index, JsonNode call, Out out) {
    String name = text(call.get("name"));
    boolean continues = call.path("willContinue").asBoolean(false);
    JsonNode partial = call.get("partialArgs");
    JsonNode args = call.get("args");
    StreamedCall open = streamed.get(index);
    if (open == null && (continues || partial != null)) {
      if (name.isEmpty()) {
        invalidCall("streamed arguments with no call open (no functionCall with a name and willContinue before them)",
            call, out);
        return;
      }
      open = new StreamedCall(calls.merge(index, 1, Integer::sum) - 1);
      streamed.put(index, open);
      out.delta(new LlmDelta.ToolCallStart(index, open.index, text(call.get("id")), name, false));
    } else if (open == null) {
      if (name.isEmpty()) {
        invalidCall("a function call without a name", call, out);
        return;
      }
      int n = calls.merge(index, 1, Integer::sum) - 1;
      out.delta(new LlmDelta.ToolCallStart(index, n, text(call.get("id")), name, false));
      out.delta(new LlmDelta.ToolCallArguments(index, n, args == null || args.isNull() ? "{}" : args.toString()));
      return;
    } else if (!name.isEmpty()) {
      invalidCall("a call named while streamed call " + open.index + " is still open", call, out);
      return;
    }
    if (args != null && !(args.isObject() && args.isEmpty())) {
      invalidCall("whole args inside a streamed call", call, out);
      return;
    }
    try {
      for (JsonNode arg : partial == null ? mapper.createArrayNode() : partial) {
        String fragment = open.argument(arg);
        if (!fragment.isEmpty()) {
          out.delta(new LlmDelta.ToolCallArguments(index, open.index, fragment));
        }
      }
    } catch (IllegalArgumentException e) {
      invalidCall(e.getMessage(), call, out);
      return;
    }
    if (!continues) {
      streamed.remove(index);
      out.delta(new LlmDelta.ToolCallArguments(index, open.index, open.writer.close()));
    }
  }

  private void invalidCall(@Nullable String problem, JsonNode call, Out out) {
    failed = true;
    out.fail(serverError("invalid_function_call", "", "Cannot read a functionCall part: " + problem + ": " + call));
  }

  /** A call whose arguments Vertex streams ({@code partialArgs}), written as JSON text as they come. */
  private static final class StreamedCall {
    final int index;
    final JsonPathWriter writer = new JsonPathWriter();

    StreamedCall(int index) {
      this.index = index;
    }

    /** One {@code partialArgs} entry as a fragment of the arguments' JSON. */
    String argument(JsonNode arg) {
      String path = text(arg.get("jsonPath"));
      boolean more = arg.path("willContinue").asBoolean(false);
      if (arg.has("stringValue")) {
        return writer.string(path, text(arg.get("stringValue")), more);
      }
      if (arg.has("numberValue") && arg.get("numberValue").isNumber()) {
        return writer.value(path, arg.get("numberValue").toString());
      }
      if (arg.has("boolValue") && arg.get("boolValue").isBoolean()) {
        return writer.value(path, arg.get("boolValue").toString());
      }
      if (arg.has("nullValue")) {
        return writer.value(path, "null");
      }
      for (String whole : new String[] {"structValue", "listValue"}) {
        if (arg.has(whole) && (arg.get(whole).isObject() || arg.get(whole).isArray())) {
          return writer.value(path, arg.get(whole).toString());
        }
      }
      if (writer.continuesString(path)) {
        return writer.string(path, "", more);   // an empty piece, its stringValue left out
      }
      throw new IllegalArgumentException("partialArgs entry without a value it can read: " + arg);
    }
  }
}
