package io.breakwater.stream.llm;

import java.util.Locale;

/**
 * Why a choice stopped, mapped from each provider's own value ({@link LlmDelta.Finish#raw()} keeps that value).
 *
 * <pre>{@code
 * if (response.finishReason() == FinishReason.TOOL_CALLS) {
 *   response.toolCalls().forEach(call -> run(call.name(), call.arguments()));
 * }
 * }</pre>
 *
 * <table>
 *   <caption>Mapping</caption>
 *   <tr><th>reason</th><th>OpenAI chat and compatible</th><th>OpenAI Responses</th><th>Anthropic</th>
 *       <th>Gemini</th><th>Ollama</th></tr>
 *   <tr><td>{@link #STOP}</td><td>{@code stop}</td><td>{@code completed}</td><td>{@code end_turn},
 *       {@code stop_sequence}</td><td>{@code STOP}</td><td>{@code stop}</td></tr>
 *   <tr><td>{@link #LENGTH}</td><td>{@code length}</td><td>incomplete, {@code max_output_tokens}</td>
 *       <td>{@code max_tokens}, {@code model_context_window_exceeded}</td><td>{@code MAX_TOKENS}</td>
 *       <td>{@code length}</td></tr>
 *   <tr><td>{@link #TOOL_CALLS}</td><td>{@code tool_calls}, {@code function_call}</td><td>{@code completed} with
 *       function calls</td><td>{@code tool_use}</td><td>{@code STOP} with function calls</td><td>{@code stop} with
 *       tool calls</td></tr>
 *   <tr><td>{@link #CONTENT_FILTER}</td><td>{@code content_filter}</td><td>incomplete,
 *       {@code content_filter}</td><td></td><td>{@code SAFETY}, {@code RECITATION}, {@code BLOCKLIST},
 *       {@code PROHIBITED_CONTENT}, {@code SPII}, {@code IMAGE_SAFETY}, a blocked prompt</td><td></td></tr>
 *   <tr><td>{@link #REFUSAL}</td><td></td><td></td><td>{@code refusal}</td><td></td><td></td></tr>
 *   <tr><td>{@link #PAUSE}</td><td></td><td></td><td>{@code pause_turn}</td><td></td><td></td></tr>
 *   <tr><td>{@link #OTHER}</td><td colspan="5">any other value (the raw value says which)</td></tr>
 *   <tr><td>{@link #NONE}</td><td colspan="5">no finish was reported: the stream was cut before it, or the server
 *       sends none</td></tr>
 * </table>
 *
 * <p>An OpenAI refusal ends with {@code stop}: read {@link LlmChoice#refusal()}.
 */
public enum FinishReason {
  /** The model finished its answer. */
  STOP,
  /** The output hit a token limit: the answer is cut. */
  LENGTH,
  /** The model stopped to have tools called. */
  TOOL_CALLS,
  /** A content filter cut or blocked the output. */
  CONTENT_FILTER,
  /** The model refused. */
  REFUSAL,
  /** The server paused a long turn; send the response back to continue it (Anthropic {@code pause_turn}). */
  PAUSE,
  /** A value this enum does not name. */
  OTHER,
  /** No finish was reported. */
  NONE;

  /**
   * Whether an answer that ended for this reason is incomplete: {@link #LENGTH}, {@link #CONTENT_FILTER} and
   * {@link #PAUSE}. {@link LlmStreamClient} fails such a stream with {@link LlmIncompleteException}.
   */
  public boolean isIncomplete() {
    return this == LENGTH || this == CONTENT_FILTER || this == PAUSE;
  }

  /** The reason for a provider's raw value (case-insensitive); {@link #OTHER} when unknown. */
  public static FinishReason of(String raw) {
    return switch (raw.toLowerCase(Locale.ROOT)) {
      case "stop", "end_turn", "stop_sequence", "completed", "eos" -> STOP;
      case "length", "max_tokens", "max_output_tokens", "model_context_window_exceeded" -> LENGTH;
      case "tool_calls", "function_call", "tool_use" -> TOOL_CALLS;
      case "content_filter", "safety", "recitation", "blocklist", "prohibited_content", "spii", "image_safety" ->
          CONTENT_FILTER;
      case "refusal" -> REFUSAL;
      case "pause_turn" -> PAUSE;
      default -> OTHER;
    };
  }
}
