package io.breakwater.internal.stream.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.FinishReason;
import io.breakwater.stream.llm.LlmDelta;
import io.breakwater.stream.llm.LlmStreamException;
import io.breakwater.stream.llm.TokenUsage;
import java.io.IOException;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * Turns the events of one dialect into {@link LlmDelta}s, the terminal signal and server errors. One per call: it
 * keeps what later events need (block types, started tool calls, usage so far); a fresh attempt (a retry before any
 * content) gets a new one, a resumed attempt keeps it. Not thread-safe: events of a call are decoded one at a time.
 */
abstract class DialectDecoder {

  /** Where a decoder puts what an event means. */
  interface Out {
    void delta(LlmDelta delta);

    /** The event was the dialect's terminal event. */
    void terminal();

    /** The server reported an error. */
    void fail(LlmStreamException error);

    /** The event's JSON, for {@link LlmDelta.Event}; called before its deltas. */
    void raw(String type, JsonNode json);

    /**
     * The event's sequence number (OpenAI Responses); {@code false} when the event was already processed before a
     * resume and must be dropped.
     */
    boolean sequence(long number);
  }

  final ObjectMapper mapper;
  final String source;
  /** Masks the client's secrets in server text before it goes into an exception. */
  private final UnaryOperator<String> mask;

  private String responseId = "";
  private String model = "";
  private long input = -1;
  private long output = -1;
  private long total = -1;
  private long cached = -1;
  private long reasoning = -1;

  DialectDecoder(ObjectMapper mapper, String source, UnaryOperator<String> mask) {
    this.mapper = mapper;
    this.source = source;
    this.mask = mask;
  }

  static DialectDecoder of(Dialect dialect, ObjectMapper mapper, String source, UnaryOperator<String> mask) {
    return switch (dialect) {
      case OPENAI_CHAT -> new OpenAiChatDecoder(mapper, source, mask);
      case OPENAI_RESPONSES -> new ResponsesDecoder(mapper, source, mask);
      case ANTHROPIC_MESSAGES -> new AnthropicDecoder(mapper, source, mask);
      case GEMINI -> new GeminiDecoder(mapper, source, mask);
      case OLLAMA -> new OllamaDecoder(mapper, source, mask);
    };
  }

  /** The server's error, its text masked (and quoted by the exception). */
  final LlmStreamException serverError(String type, String code, String message) {
    return new LlmStreamException(source, mask.apply(type), mask.apply(code), mask.apply(message));
  }

  /** Decodes one event ({@code type} is the SSE event type, {@code "message"} for NDJSON lines). */
  abstract void decode(String type, String data, Out out);

  /** At the end of the body: whether that end is the dialect's terminal signal (Gemini ends without an event). */
  boolean endIsTerminal() {
    return false;
  }

  /** Whether a stream cut after content can be resumed, as far as this decoder knows (OpenAI Responses). */
  boolean canResume() {
    return false;
  }

  /** The response's id as the server named it; {@code ""} until then. */
  String responseId() {
    return responseId;
  }

  /**
   * Parses {@code data} and reports its raw event; on invalid JSON reports an {@code invalid_json} error and returns
   * {@code null}. An event whose {@code sequence_number} was processed before a resume is dropped: {@code null}.
   */
  final @Nullable JsonNode parse(String type, String data, Out out) {
    try {
      JsonNode json = mapper.readTree(data);
      if (json == null || json.isMissingNode()) {
        out.fail(serverError("invalid_json", "", "empty event data"));
        return null;
      }
      JsonNode sequence = json.get("sequence_number");
      if (sequence != null && sequence.canConvertToLong() && !out.sequence(sequence.asLong())) {
        return null;   // delivered before a resume: neither its raw event nor its deltas again
      }
      out.raw(type, json);
      return json;
    } catch (IOException e) {
      out.fail(serverError("invalid_json", "", "unparseable event data: " + data));
      return null;
    }
  }

  /** Parses {@code data}; {@code null} when it is not JSON or is an error object (then reported). */
  final @Nullable JsonNode parseUnlessError(String type, String data, Out out) {
    JsonNode json = parse(type, data, out);
    if (json != null && json.hasNonNull("error")) {
      out.fail(error(json));
      return null;
    }
    return json;
  }

  /** Emits {@link LlmDelta.Metadata} when the id or the model is first named, or changes. */
  final void metadata(@Nullable JsonNode id, @Nullable JsonNode model, Out out) {
    String newId = id != null && id.isTextual() ? id.asText() : responseId;
    String newModel = model != null && model.isTextual() ? model.asText() : this.model;
    if (!newId.equals(responseId) || !newModel.equals(this.model)) {
      responseId = newId;
      this.model = newModel;
      out.delta(new LlmDelta.Metadata(newId, newModel));
    }
  }

  /**
   * Merges a usage report (each count given replaces the one before; {@code -1}: not in this report) and emits the
   * result.
   */
  final void usage(long input, long output, long total, long cached, long reasoning, Out out) {
    if (input < 0 && output < 0 && total < 0 && cached < 0 && reasoning < 0) {
      return;
    }
    this.input = input >= 0 ? input : this.input;
    this.output = output >= 0 ? output : this.output;
    this.total = total >= 0 ? total : this.total;
    this.cached = cached >= 0 ? cached : this.cached;
    this.reasoning = reasoning >= 0 ? reasoning : this.reasoning;
    long in = Math.max(0, this.input);
    long out2 = Math.max(0, this.output);
    out.delta(new LlmDelta.Usage(new TokenUsage(in, out2, this.total >= 0 ? this.total : saturatedAdd(in, out2),
        Math.max(0, this.cached), Math.max(0, this.reasoning))));
  }

  /** A count from the server: a non-negative integer, else {@code -1} (absent, negative, not a number). */
  static long count(JsonNode node) {
    if (node == null || !node.isNumber()) {
      return -1;
    }
    if (node.canConvertToLong()) {
      long value = node.asLong();
      return value >= 0 ? value : -1;
    }
    return node.asDouble() > 0 ? Long.MAX_VALUE : -1;   // a huge number saturates
  }

  static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return sum < 0 ? Long.MAX_VALUE : sum;
  }

  static String text(JsonNode node) {
    return node != null && node.isTextual() ? node.asText() : "";
  }

  /** The finish delta for a raw reason, mapped, or as {@link FinishReason#TOOL_CALLS} when calls were made. */
  static LlmDelta.Finish finish(int choice, String raw, boolean toolCalls) {
    FinishReason reason = FinishReason.of(raw);
    return new LlmDelta.Finish(choice, toolCalls && reason == FinishReason.STOP ? FinishReason.TOOL_CALLS : reason,
        raw);
  }

  /** An error object ({@code {"type", "code", "message"}}, a bare string, or a wrapper holding one). */
  final LlmStreamException error(JsonNode json) {
    JsonNode error = json.has("error") ? json.path("error") : json;
    if (error.isTextual()) {
      return serverError("", "", error.asText());
    }
    String code = error.path("code").isValueNode() ? error.path("code").asText() : "";
    String type = text(error.path("type"));
    if (type.equals("error")) {
      if (error.path("error").isObject()) {
        return error(error.path("error"));
      }
      type = "";
    }
    JsonNode message = error.path("message");
    return serverError(type.isEmpty() ? text(error.path("status")) : type, code,
        message.isTextual() ? message.asText() : error.toString());
  }
}
