package io.breakwater.stream.llm;

import org.jspecify.annotations.Nullable;

/**
 * The streaming protocol an {@link LlmStreamClient} speaks. docs/stream.md has a table per dialect: which events map
 * to which {@link LlmDelta}, and what is not modelled.
 *
 * <table>
 *   <caption>Dialects</caption>
 *   <tr><th>dialect</th><th>default path</th><th>framing</th><th>terminal event</th></tr>
 *   <tr><td>{@link #OPENAI_CHAT}</td><td>{@code /v1/chat/completions}</td><td>SSE</td><td>{@code data: [DONE]}</td></tr>
 *   <tr><td>{@link #OPENAI_RESPONSES}</td><td>{@code /v1/responses}</td><td>SSE</td><td>{@code response.completed},
 *       {@code response.incomplete}</td></tr>
 *   <tr><td>{@link #ANTHROPIC_MESSAGES}</td><td>{@code /v1/messages}</td><td>SSE</td>
 *       <td>{@code event: message_stop}</td></tr>
 *   <tr><td>{@link #GEMINI}</td><td>none: give {@code /v1beta/models/{model}:streamGenerateContent?alt=sse}</td>
 *       <td>SSE</td><td>the end of the body after a {@code finishReason}</td></tr>
 *   <tr><td>{@link #OLLAMA}</td><td>{@code /api/chat}</td><td>NDJSON</td><td>a line with {@code "done": true}</td></tr>
 * </table>
 *
 * <pre>{@code
 * LlmStreamClient claude = LlmStreamClient.builder("https://api.anthropic.com", Dialect.ANTHROPIC_MESSAGES)
 *     .header("x-api-key", key).header("anthropic-version", "2023-06-01")
 *     .build();
 * }</pre>
 */
public enum Dialect {
  /**
   * OpenAI chat completions and the servers compatible with it: vLLM, Groq, Mistral, DeepSeek, OpenRouter, LiteLLM,
   * Ollama's {@code /v1}, llama.cpp; also the legacy {@code /v1/completions} ({@code choices[].text}).
   */
  OPENAI_CHAT("/v1/chat/completions", false),
  /** OpenAI Responses; a background response is resumed by sequence number ({@code starting_after}). */
  OPENAI_RESPONSES("/v1/responses", false),
  /** Anthropic Messages. */
  ANTHROPIC_MESSAGES("/v1/messages", false),
  /**
   * Google Gemini {@code streamGenerateContent?alt=sse}, on the Gemini API and on Vertex AI; the model is in the
   * path, so {@link LlmStreamClient.Builder#path(String)} is required. The request gets no {@code "stream"} field.
   * Without {@code alt=sse} the server answers with a JSON array, which fails at once with an
   * {@link LlmStreamException} of kind {@code INVALID_ARGUMENT} (not retried) that says to add it.
   */
  GEMINI(null, false),
  /** Ollama's native API ({@code /api/chat}, {@code /api/generate}): one JSON object per line. */
  OLLAMA("/api/chat", true);

  private final @Nullable String defaultPath;
  private final boolean ndjson;

  Dialect(@Nullable String defaultPath, boolean ndjson) {
    this.defaultPath = defaultPath;
    this.ndjson = ndjson;
  }

  /** The request path used unless the builder sets another; {@code null} for {@link #GEMINI}. */
  public @Nullable String defaultPath() {
    return defaultPath;
  }

  /** Whether the body is newline-delimited JSON rather than server-sent events. */
  public boolean isNdjson() {
    return ndjson;
  }
}
