package io.breakwater.stream.llm;

/**
 * The tokens a response used, as the server last reported them. Counts the server did not report are 0.
 *
 * <pre>{@code
 * TokenUsage usage = response.usage();      // null when the server reported none
 * long billed = usage == null ? 0 : usage.inputTokens() + usage.outputTokens();
 * }</pre>
 *
 * @param inputTokens tokens of the prompt ({@code prompt_tokens}, {@code input_tokens}, {@code promptTokenCount},
 *     {@code prompt_eval_count})
 * @param outputTokens tokens generated ({@code completion_tokens}, {@code output_tokens},
 *     {@code candidatesTokenCount}, {@code eval_count}); OpenAI counts reasoning in them, Gemini does not
 * @param totalTokens the server's total when it gives one, else input + output
 * @param cachedInputTokens input tokens served from a prompt cache
 * @param reasoningTokens tokens spent on reasoning ({@code reasoning_tokens}, {@code thinking_tokens},
 *     {@code thoughtsTokenCount})
 */
public record TokenUsage(long inputTokens, long outputTokens, long totalTokens, long cachedInputTokens,
    long reasoningTokens) {

  public TokenUsage {
    if (inputTokens < 0 || outputTokens < 0 || totalTokens < 0 || cachedInputTokens < 0 || reasoningTokens < 0) {
      throw new IllegalArgumentException("token counts must not be negative: " + inputTokens + ", " + outputTokens
          + ", " + totalTokens + ", " + cachedInputTokens + ", " + reasoningTokens);
    }
  }
}
