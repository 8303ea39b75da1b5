package io.breakwater.stream.llm;

import java.util.List;
import java.util.Objects;

/**
 * One assembled choice of an {@link LlmResponse} (OpenAI {@code n > 1}, Gemini candidates; a single choice
 * elsewhere). Immutable.
 *
 * <pre>{@code
 * for (LlmChoice choice : response.choices()) {
 *   System.out.println(choice.index() + ": " + choice.text() + " (" + choice.finishReason() + ")");
 * }
 * }</pre>
 *
 * @param index the choice's index
 * @param text the answer's text
 * @param refusal the refusal's text; {@code ""} if the model did not refuse this way
 * @param reasoning the reasoning (thinking, summaries), never part of {@code text}
 * @param reasoningSignatures the signatures of the reasoning, in order, to send back on the next turn
 * @param redactedReasoning encrypted reasoning, in order, to send back unchanged
 * @param toolCalls the calls the caller should run, in the order they began
 * @param serverToolCalls the calls the server ran itself (e.g. Anthropic web search)
 * @param citations the sources cited
 * @param otherOutput output no other field models, whole
 * @param finishReason why the choice stopped; {@link FinishReason#NONE} if the stream did not say
 * @param rawFinishReason the server's own value; {@code ""} if none
 */
public record LlmChoice(int index, String text, String refusal, String reasoning, List<String> reasoningSignatures,
    List<String> redactedReasoning, List<ToolCall> toolCalls, List<ToolCall> serverToolCalls,
    List<Citation> citations, List<LlmDelta.Output> otherOutput, FinishReason finishReason,
    String rawFinishReason) {

  public LlmChoice {
    Objects.requireNonNull(text, "text");
    Objects.requireNonNull(refusal, "refusal");
    Objects.requireNonNull(reasoning, "reasoning");
    reasoningSignatures = List.copyOf(reasoningSignatures);
    redactedReasoning = List.copyOf(redactedReasoning);
    toolCalls = List.copyOf(toolCalls);
    serverToolCalls = List.copyOf(serverToolCalls);
    citations = List.copyOf(citations);
    otherOutput = List.copyOf(otherOutput);
    Objects.requireNonNull(finishReason, "finishReason");
    Objects.requireNonNull(rawFinishReason, "rawFinishReason");
  }

  /** An empty choice: no output, no finish. */
  public static LlmChoice empty(int index) {
    return new LlmChoice(index, "", "", "", List.of(), List.of(), List.of(), List.of(), List.of(), List.of(),
        FinishReason.NONE, "");
  }
}
