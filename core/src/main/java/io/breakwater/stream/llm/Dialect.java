package io.breakwater.stream.llm;

/**
 * The streaming protocol an {@link LlmStreamClient} speaks.
 *
 * <table>
 *   <caption>Dialects</caption>
 *   <tr><th>dialect</th><th>path</th><th>content</th><th>terminal event</th><th>errors</th></tr>
 *   <tr><td>{@link #OPENAI_CHAT}</td><td>{@code /v1/chat/completions}</td><td>{@code choices[0].delta.content},
 *       tool-call deltas, finish reasons</td><td>{@code data: [DONE]}</td><td>{@code data: {"error": ...}},
 *       {@code event: error}</td></tr>
 *   <tr><td>{@link #ANTHROPIC_MESSAGES}</td><td>{@code /v1/messages}</td><td>{@code content_block_delta}
 *       ({@code text}, {@code partial_json}), {@code message_delta}</td><td>{@code event: message_stop}</td>
 *       <td>{@code event: error} (e.g. {@code overloaded_error} mid-stream); {@code ping} is a heartbeat</td></tr>
 * </table>
 */
public enum Dialect {
  /** OpenAI-compatible chat completions (OpenAI, vLLM, Ollama, llama.cpp, LiteLLM, …). */
  OPENAI_CHAT("/v1/chat/completions"),
  /** Anthropic Messages. */
  ANTHROPIC_MESSAGES("/v1/messages");

  private final String defaultPath;

  Dialect(String defaultPath) {
    this.defaultPath = defaultPath;
  }

  /** The request path used unless the builder sets another. */
  public String defaultPath() {
    return defaultPath;
  }
}
