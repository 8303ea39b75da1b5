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
 *   <tr><td>{@link #OPENAI_RESPONSES}</td><td>{@code /v1/responses}</td><td>{@code response.output_text.delta},
 *       {@code response.function_call_arguments.delta}</td><td>{@code response.completed},
 *       {@code response.incomplete}</td><td>{@code error}, {@code response.failed}; resumed with
 *       {@code GET /v1/responses/{id}?stream=true&starting_after=N} (needs {@code "background": true})</td></tr>
 * </table>
 *
 * <pre>{@code
 * LlmStreamClient claude = LlmStreamClient.builder("https://api.anthropic.com", Dialect.ANTHROPIC_MESSAGES)
 *     .header("x-api-key", key).header("anthropic-version", "2023-06-01")
 *     .build();
 * }</pre>
 */
public enum Dialect {
  /** OpenAI-compatible chat completions (OpenAI, vLLM, Ollama, llama.cpp, LiteLLM, …). */
  OPENAI_CHAT("/v1/chat/completions"),
  /** Anthropic Messages. */
  ANTHROPIC_MESSAGES("/v1/messages"),
  /** OpenAI Responses, resumable by sequence number ({@code starting_after}). */
  OPENAI_RESPONSES("/v1/responses");

  private final String defaultPath;

  Dialect(String defaultPath) {
    this.defaultPath = defaultPath;
  }

  /** The request path used unless the builder sets another. */
  public String defaultPath() {
    return defaultPath;
  }
}
