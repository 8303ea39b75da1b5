package io.breakwater.internal.stream.llm;

import io.breakwater.stream.llm.Citation;
import io.breakwater.stream.llm.LlmChoice;
import io.breakwater.stream.llm.LlmDelta;
import io.breakwater.stream.llm.LlmResponse;
import io.breakwater.stream.llm.ToolCall;

/**
 * A truncated response as text, for {@code StreamTruncatedException.partialOutput()}: the answer's text alone when
 * that is all that was delivered; otherwise every kind of content of every choice, each on lines of its own headed
 * by a label ({@code [reasoning]}, {@code [refusal]}, {@code [text]}, {@code [tool call name id]},
 * {@code [server tool call name id]}, {@code [citation]}, {@code [output type]}), so that nothing delivered is left
 * out of the text either. Signatures and encrypted reasoning are counted, not copied.
 */
final class PartialOutput {

  private PartialOutput() {}

  static String of(LlmResponse response) {
    if (response.choices().size() == 1 && onlyText(response.choice())) {
      return response.text();
    }
    StringBuilder out = new StringBuilder(256);
    for (LlmChoice c : response.choices()) {
      String choice = response.choices().size() > 1 ? "choice " + c.index() + " " : "";
      section(out, choice + "reasoning", c.reasoning());
      if (!c.reasoningSignatures().isEmpty() || !c.redactedReasoning().isEmpty()) {
        section(out, choice + "reasoning signatures", c.reasoningSignatures().size() + " signatures, "
            + c.redactedReasoning().size() + " encrypted reasoning blocks");
      }
      section(out, choice + "refusal", c.refusal());
      section(out, choice + "text", c.text());
      for (ToolCall call : c.toolCalls()) {
        section(out, choice + "tool call " + call.name() + (call.id().isEmpty() ? "" : " " + call.id()),
            call.argumentsJson());
      }
      for (ToolCall call : c.serverToolCalls()) {
        section(out, choice + "server tool call " + call.name() + (call.id().isEmpty() ? "" : " " + call.id()),
            call.argumentsJson());
      }
      for (Citation citation : c.citations()) {
        section(out, choice + "citation", (citation.title() + " " + citation.url()).trim());
      }
      for (LlmDelta.Output o : c.otherOutput()) {
        section(out, choice + "output " + o.type(), o.json().toString());
      }
    }
    return out.toString();
  }

  private static boolean onlyText(LlmChoice c) {
    return c.reasoning().isEmpty() && c.refusal().isEmpty() && c.reasoningSignatures().isEmpty()
        && c.redactedReasoning().isEmpty() && c.toolCalls().isEmpty() && c.serverToolCalls().isEmpty()
        && c.citations().isEmpty() && c.otherOutput().isEmpty();
  }

  private static void section(StringBuilder out, String label, String content) {
    if (content.isEmpty()) {
      return;
    }
    if (out.length() > 0) {
      out.append('\n');
    }
    out.append('[').append(label).append("]\n").append(content);
  }
}
