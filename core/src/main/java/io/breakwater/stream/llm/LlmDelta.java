package io.breakwater.stream.llm;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;

/**
 * One typed piece of a streamed LLM response, as {@link LlmStreamClient#stream(Object)} delivers it. Every dialect
 * maps to the same records; {@link LlmResponse#aggregate} assembles them.
 *
 * <pre>{@code
 * client.stream(request).subscribe(delta -> {
 *   if (delta instanceof LlmDelta.Text t) {
 *     ui.append(t.text());
 *   } else if (delta instanceof LlmDelta.ToolCallStart s) {
 *     ui.showTool(s.name());
 *   } else if (delta instanceof LlmDelta.Finish f) {
 *     ui.done(f.reason());
 *   }
 * });
 * }</pre>
 *
 * <ul>
 *   <li><b>Content</b> ({@link #isContent()}): text, refusal, reasoning and its signatures, tool-call starts and
 *       argument fragments, citations and unmodelled output. Only content counts as progress for the first-token and
 *       idle budgets, and only content closes the window in which a failed stream may be sent again.</li>
 *   <li><b>Framing</b>: {@link Metadata}, {@link Usage}, {@link Finish}, {@link Event}, {@link Done}. Before the
 *       first content the client holds framing back, so a retried attempt never repeats it.</li>
 *   <li>{@code choice} is the choice (OpenAI {@code n > 1}) or candidate (Gemini) index; 0 elsewhere.</li>
 *   <li>What no record models stays reachable: unmodelled output as {@link Output}, and, with
 *       {@link LlmStreamClient.Builder#rawEvents(boolean)}, every event's JSON as {@link Event}.</li>
 * </ul>
 */
public sealed interface LlmDelta {

  /** Whether this delta is content (model output) rather than framing. Not a JSON property. */
  @JsonIgnore
  default boolean isContent() {
    return false;
  }

  /** The response's id and model, sent once, as soon as the server names them ({@code ""} if it does not). */
  record Metadata(String responseId, String model) implements LlmDelta {
    public Metadata {
      Objects.requireNonNull(responseId, "responseId");
      Objects.requireNonNull(model, "model");
    }
  }

  /** A fragment of the answer's text. */
  record Text(int choice, String text) implements LlmDelta {
    public Text {
      Objects.requireNonNull(text, "text");
    }

    @Override
    public boolean isContent() {
      return true;
    }
  }

  /** A fragment of a refusal (OpenAI {@code delta.refusal}, Responses {@code response.refusal.delta}). */
  record Refusal(int choice, String text) implements LlmDelta {
    public Refusal {
      Objects.requireNonNull(text, "text");
    }

    @Override
    public boolean isContent() {
      return true;
    }
  }

  /**
   * A fragment of reasoning: Anthropic thinking, Gemini thought parts, Responses reasoning summaries, DeepSeek
   * {@code reasoning_content}, Groq and OpenRouter {@code reasoning}, Mistral thinking chunks, Ollama
   * {@code thinking}. Never part of the text.
   */
  record Reasoning(int choice, String text) implements LlmDelta {
    public Reasoning {
      Objects.requireNonNull(text, "text");
    }

    @Override
    public boolean isContent() {
      return true;
    }
  }

  /**
   * A signature of reasoning, to send back with it on the next turn (Anthropic {@code signature_delta}, Gemini
   * {@code thoughtSignature}, OpenRouter {@code reasoning_details[].signature}).
   */
  record ReasoningSignature(int choice, String signature) implements LlmDelta {
    public ReasoningSignature {
      Objects.requireNonNull(signature, "signature");
    }

    @Override
    public boolean isContent() {
      return true;
    }
  }

  /**
   * Reasoning the server sends only encrypted, to send back unchanged (Anthropic {@code redacted_thinking}, OpenAI
   * Responses {@code encrypted_content}).
   */
  record RedactedReasoning(int choice, String data) implements LlmDelta {
    public RedactedReasoning {
      Objects.requireNonNull(data, "data");
    }

    @Override
    public boolean isContent() {
      return true;
    }
  }

  /**
   * A tool call begins. {@code index} identifies it within the choice (its argument fragments carry the same index);
   * {@code id} is {@code ""} when the server gives none; {@code serverSide} marks a tool the server runs itself
   * (Anthropic {@code server_tool_use}).
   */
  record ToolCallStart(int choice, int index, String id, String name, boolean serverSide) implements LlmDelta {
    public ToolCallStart {
      Objects.requireNonNull(id, "id");
      Objects.requireNonNull(name, "name");
    }

    @Override
    public boolean isContent() {
      return true;
    }
  }

  /** A fragment of a tool call's JSON arguments (never text). */
  record ToolCallArguments(int choice, int index, String fragment) implements LlmDelta {
    public ToolCallArguments {
      Objects.requireNonNull(fragment, "fragment");
    }

    @Override
    public boolean isContent() {
      return true;
    }
  }

  /** The answer cites a source. */
  record CitationAdded(int choice, Citation citation) implements LlmDelta {
    public CitationAdded {
      Objects.requireNonNull(citation, "citation");
    }

    @Override
    public boolean isContent() {
      return true;
    }
  }

  /**
   * Output no other record models, kept whole: e.g. an Anthropic {@code web_search_tool_result} block, a Responses
   * {@code web_search_call} item, a Gemini {@code inlineData} or {@code executableCode} part. {@code type} is the
   * block's, item's or part's type.
   */
  record Output(int choice, String type, JsonNode json) implements LlmDelta {
    public Output {
      Objects.requireNonNull(type, "type");
      Objects.requireNonNull(json, "json");
    }

    @Override
    public boolean isContent() {
      return true;
    }
  }

  /** The usage reported so far, merged with what the server reported before (each report replaces its fields). */
  record Usage(TokenUsage usage) implements LlmDelta {
    public Usage {
      Objects.requireNonNull(usage, "usage");
    }
  }

  /** A choice finished: the mapped reason and the server's raw value. */
  record Finish(int choice, FinishReason reason, String raw) implements LlmDelta {
    public Finish {
      Objects.requireNonNull(reason, "reason");
      Objects.requireNonNull(raw, "raw");
    }
  }

  /**
   * One event as the server sent it, delivered before the deltas mapped from it, only with
   * {@link LlmStreamClient.Builder#rawEvents(boolean)}: {@code type} is the SSE event type, or the JSON's
   * {@code type} when the SSE type is {@code message}.
   */
  record Event(String type, JsonNode json) implements LlmDelta {
    public Event {
      Objects.requireNonNull(type, "type");
      Objects.requireNonNull(json, "json");
    }
  }

  /** The stream ended with its terminal event; the last delta of a successful stream. */
  record Done(int attempts) implements LlmDelta {}
}
