package io.breakwater.internal.stream.llm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.breakwater.stream.llm.Citation;
import io.breakwater.stream.llm.FinishReason;
import io.breakwater.stream.llm.LlmDelta;
import io.breakwater.stream.llm.TokenUsage;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The size of what a response holds, which the client's {@code maxResponseBytes} bounds. */
class ResponseAssemblerTest {

  /** Accepts {@code delta} and checks that it added the UTF-8 bytes of {@code output}, nothing more. */
  private static void assertAdds(ResponseAssembler response, LlmDelta delta, String... output) {
    long before = response.outputBytes();
    response.accept(delta);
    long added = 0;
    for (String s : output) {
      added += s.getBytes(StandardCharsets.UTF_8).length;
    }
    assertThat(response.outputBytes() - before).as(delta.toString()).isEqualTo(added);
  }

  @Test
  void everyKindOfOutputCountsItsBytesAndBookkeepingCountsNone() {
    ResponseAssembler response = new ResponseAssembler(new ObjectMapper());
    assertThat(response.isEmpty()).isTrue();
    assertAdds(response, new LlmDelta.Metadata("resp_1", "model-x"));
    assertAdds(response, new LlmDelta.Text(0, "h\u00e9llo"), "h\u00e9llo");
    assertThat(response.isEmpty()).isFalse();
    assertAdds(response, new LlmDelta.ToolCallStart(0, 0, "call_1", "s\u00f6k", false), "call_1", "s\u00f6k");
    assertAdds(response, new LlmDelta.ToolCallArguments(0, 0, "{\"q\":\"\u20ac\"}"), "{\"q\":\"\u20ac\"}");
    assertAdds(response, new LlmDelta.Reasoning(0, "thinking \u00e9"), "thinking \u00e9");
    assertAdds(response, new LlmDelta.Refusal(0, "no \u00e9"), "no \u00e9");
    assertAdds(response, new LlmDelta.ReasoningSignature(0, "sig\u00e9"), "sig\u00e9");
    assertAdds(response, new LlmDelta.RedactedReasoning(0, "opaque\u00e9"), "opaque\u00e9");
    assertAdds(response, new LlmDelta.CitationAdded(0, new Citation("https://e.x/\u00e9", "T\u00e9", "cit\u00e9d",
        JsonNodeFactory.instance.objectNode())), "https://e.x/\u00e9", "T\u00e9", "cit\u00e9d", "{}");
    assertAdds(response, new LlmDelta.Output(0, "web_search_call",
        JsonNodeFactory.instance.objectNode().put("k", "\u00e9")), "{\"k\":\"\u00e9\"}");
    assertAdds(response, new LlmDelta.Finish(0, FinishReason.STOP, "stop"));
    assertAdds(response, new LlmDelta.Usage(new TokenUsage(1, 2, 3, 0, 0)));
    assertAdds(response, new LlmDelta.Done(1));
  }

  @Test
  void entriesWithoutTextCountAgainstTheBound() {
    ResponseAssembler response = new ResponseAssembler(new ObjectMapper());
    long bound = 64 * 256;
    for (int i = 0; i < 64; i++) {
      response.accept(new LlmDelta.ToolCallStart(0, i, "", "", false));
    }
    assertThat(response.outputBytes()).isZero();
    assertThat(response.entries()).isEqualTo(65);   // the choice and its 64 calls
    assertThat(response.exceeds(bound)).isTrue();
    assertThat(response.exceeds(bound + 256)).isFalse();
  }
}
