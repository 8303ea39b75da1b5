package io.breakwater.internal.stream.llm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.stream.llm.Citation;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.FinishReason;
import io.breakwater.stream.llm.LlmDelta;
import io.breakwater.stream.llm.TokenUsage;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The branches of the per-provider decoders that the dialect fixtures do not reach: each event is written the way
 * its provider sends it, decoded directly, and the deltas, terminal signal and failures it gives are asserted exactly.
 */
class DecoderBranchesTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final RecordingOut out = new RecordingOut();

  private static DialectDecoder decoder(Dialect dialect) {
    return DialectDecoder.of(dialect, JSON, "test", UnaryOperator.identity());
  }

  private static JsonNode json(String text) {
    try {
      return JSON.readTree(text);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(e);
    }
  }

  private static String chat(String delta) {
    return "{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":"
        + delta + ",\"finish_reason\":null}]}";
  }

  private static final LlmDelta CHAT_METADATA = new LlmDelta.Metadata("c1", "m");

  // ---- OpenAI chat completions and compatible servers ----

  @Test
  void mistralContentPartsGiveThinkingAsReasoningAndTextPartsAsText() {
    DialectDecoder d = decoder(Dialect.OPENAI_CHAT);
    d.decode("message", chat("{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":"
        + "[{\"type\":\"text\",\"text\":\"Weigh it.\"},{\"type\":\"text\",\"text\":\"\"}]},"
        + "{\"type\":\"text\",\"text\":\"\"},{\"type\":\"text\",\"text\":\"Answer.\"}]}"), out);

    assertThat(out.deltas).containsExactly(CHAT_METADATA, new LlmDelta.Reasoning(0, "Weigh it."),
        new LlmDelta.Text(0, "Answer."));
  }

  @Test
  void contentPartsWithoutATypeButWithTextAreTextAndOtherPartsAreSkipped() {
    DialectDecoder d = decoder(Dialect.OPENAI_CHAT);
    d.decode("message", chat("{\"content\":[{\"text\":\"untyped\"},"
        + "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://example.com/a.png\"}}]}"), out);

    assertThat(out.deltas).containsExactly(CHAT_METADATA, new LlmDelta.Text(0, "untyped"));
  }

  @Test
  void deepSeekReasoningContentIsReasoning() {
    DialectDecoder d = decoder(Dialect.OPENAI_CHAT);
    d.decode("message", chat("{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"Think.\"}"), out);

    assertThat(out.deltas).containsExactly(CHAT_METADATA, new LlmDelta.Reasoning(0, "Think."));
  }

  @Test
  void openRouterReasoningDetailsGiveTheTextOnlyWhenNoReasoningFieldDid() {
    DialectDecoder d = decoder(Dialect.OPENAI_CHAT);
    d.decode("message", chat("{\"content\":\"\",\"reasoning\":\"Step one.\",\"reasoning_details\":"
        + "[{\"type\":\"reasoning.text\",\"text\":\"Step one.\",\"format\":\"anthropic-claude-v1\",\"index\":0}]}"),
        out);
    d.decode("message", chat("{\"content\":\"\",\"reasoning_details\":"
        + "[{\"type\":\"reasoning.text\",\"text\":\"Step two.\",\"format\":\"anthropic-claude-v1\",\"index\":0}]}"),
        out);

    assertThat(out.deltas).containsExactly(CHAT_METADATA, new LlmDelta.Reasoning(0, "Step one."),
        new LlmDelta.Reasoning(0, "Step two."));
  }

  @Test
  void openRouterReasoningDetailSignaturesAreDeliveredWithOrWithoutText() {
    DialectDecoder d = decoder(Dialect.OPENAI_CHAT);
    d.decode("message", chat("{\"content\":\"\",\"reasoning\":\"Done.\",\"reasoning_details\":"
        + "[{\"type\":\"reasoning.text\",\"text\":\"Done.\",\"signature\":\"sig-1\",\"index\":0}]}"), out);
    d.decode("message", chat("{\"content\":\"\",\"reasoning_details\":"
        + "[{\"type\":\"reasoning.text\",\"text\":\"\",\"signature\":\"sig-2\",\"index\":0}]}"), out);

    assertThat(out.deltas).containsExactly(CHAT_METADATA, new LlmDelta.Reasoning(0, "Done."),
        new LlmDelta.ReasoningSignature(0, "sig-1"), new LlmDelta.ReasoningSignature(0, "sig-2"));
  }

  @Test
  void openRouterEncryptedReasoningDetailsAreRedactedReasoning() {
    DialectDecoder d = decoder(Dialect.OPENAI_CHAT);
    d.decode("message", chat("{\"content\":\"\",\"reasoning_details\":"
        + "[{\"type\":\"reasoning.encrypted\",\"data\":\"opaque==\",\"format\":\"openai-responses-v1\",\"index\":0},"
        + "{\"type\":\"reasoning.encrypted\",\"data\":\"\",\"index\":1}]}"), out);
    d.decode("message", chat("{\"content\":\"\",\"reasoning\":\"Visible.\",\"reasoning_details\":"
        + "[{\"type\":\"reasoning.encrypted\",\"data\":\"more==\",\"index\":2}]}"), out);

    assertThat(out.deltas).containsExactly(CHAT_METADATA, new LlmDelta.RedactedReasoning(0, "opaque=="),
        new LlmDelta.Reasoning(0, "Visible."), new LlmDelta.RedactedReasoning(0, "more=="));
  }

  @Test
  void toolCallsWithoutAnIndexAreNumberedInOrderAndFragmentsContinueTheLastOne() {
    DialectDecoder d = decoder(Dialect.OPENAI_CHAT);
    d.decode("message", chat("{\"tool_calls\":[{\"id\":\"call_a\",\"type\":\"function\","
        + "\"function\":{\"name\":\"weather\",\"arguments\":\"{\\\"city\\\":\"}}]}"), out);
    d.decode("message", chat("{\"tool_calls\":[{\"function\":{\"arguments\":\"\\\"Paris\\\"}\"}}]}"), out);
    d.decode("message", chat("{\"tool_calls\":[{\"id\":\"call_b\",\"type\":\"function\","
        + "\"function\":{\"name\":\"time\",\"arguments\":\"{}\"}}]}"), out);
    d.decode("message", chat("{\"tool_calls\":[{\"function\":{\"arguments\":\" \"}}]}"), out);

    assertThat(out.deltas).containsExactly(CHAT_METADATA,
        new LlmDelta.ToolCallStart(0, 0, "call_a", "weather", false),
        new LlmDelta.ToolCallArguments(0, 0, "{\"city\":"),
        new LlmDelta.ToolCallArguments(0, 0, "\"Paris\"}"),
        new LlmDelta.ToolCallStart(0, 1, "call_b", "time", false),
        new LlmDelta.ToolCallArguments(0, 1, "{}"),
        new LlmDelta.ToolCallArguments(0, 1, " "));
  }

  @Test
  void aToolCallWithoutAnIndexIsNewWhenItHasOnlyAnIdOrOnlyAName() {
    DialectDecoder d = decoder(Dialect.OPENAI_CHAT);
    d.decode("message", chat("{\"tool_calls\":[{\"id\":\"call_a\",\"function\":{\"arguments\":\"{}\"}},"
        + "{\"function\":{\"name\":\"lookup\",\"arguments\":\"{}\"}}]}"), out);

    assertThat(out.deltas).containsExactly(CHAT_METADATA,
        new LlmDelta.ToolCallStart(0, 0, "call_a", "", false),
        new LlmDelta.ToolCallArguments(0, 0, "{}"),
        new LlmDelta.ToolCallStart(0, 1, "", "lookup", false),
        new LlmDelta.ToolCallArguments(0, 1, "{}"));
  }

  @Test
  void aFragmentWithoutAnIndexBeforeAnyCallStartsCallZero() {
    DialectDecoder d = decoder(Dialect.OPENAI_CHAT);
    d.decode("message", chat("{\"tool_calls\":[{\"function\":{\"arguments\":\"{}\"}}]}"), out);

    assertThat(out.deltas).containsExactly(CHAT_METADATA, new LlmDelta.ToolCallStart(0, 0, "", "", false),
        new LlmDelta.ToolCallArguments(0, 0, "{}"));
  }

  @Test
  void toolCallsAreKeptApartByChoiceAndByIndex() {
    DialectDecoder d = decoder(Dialect.OPENAI_CHAT);
    d.decode("message", "{\"id\":\"c1\",\"model\":\"m\",\"choices\":["
        + "{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\"}},"
        + "{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"g\"}}]}},"
        + "{\"index\":1,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"h\"}}]}}]}",
        out);
    d.decode("message", "{\"id\":\"c1\",\"model\":\"m\",\"choices\":["
        + "{\"index\":1,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{}\"}}]}}]}", out);

    assertThat(out.deltas).containsExactly(CHAT_METADATA,
        new LlmDelta.ToolCallStart(0, 0, "a", "f", false),
        new LlmDelta.ToolCallStart(0, 1, "b", "g", false),
        new LlmDelta.ToolCallStart(1, 0, "c", "h", false),
        new LlmDelta.ToolCallArguments(1, 0, "{}"));
  }

  // ---- OpenAI Responses ----

  @Test
  void responsesEventsWithoutATypeFieldAreDecodedByTheirSseEventType() {
    DialectDecoder d = decoder(Dialect.OPENAI_RESPONSES);
    d.decode("response.output_text.delta", "{\"item_id\":\"msg_1\",\"output_index\":0,\"delta\":\"Hi\"}", out);
    d.decode("message", "{\"type\":\"response.output_text.delta\",\"delta\":\" there\",\"sequence_number\":5}",
        out);

    assertThat(out.deltas).containsExactly(new LlmDelta.Text(0, "Hi"), new LlmDelta.Text(0, " there"));
  }

  @Test
  void responsesFunctionCallAddedWithItsArgumentsDeliversThem() {
    DialectDecoder d = decoder(Dialect.OPENAI_RESPONSES);
    d.decode("response.output_item.added", "{\"type\":\"response.output_item.added\",\"output_index\":1,"
        + "\"item\":{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_1\",\"name\":\"weather\","
        + "\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\",\"status\":\"completed\"}}", out);
    d.decode("response.output_item.added", "{\"type\":\"response.output_item.added\",\"output_index\":2,"
        + "\"item\":{\"type\":\"function_call\",\"id\":\"fc_2\",\"call_id\":\"call_2\",\"name\":\"time\","
        + "\"arguments\":\"\",\"status\":\"in_progress\"}}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.ToolCallStart(0, 1, "call_1", "weather", false),
        new LlmDelta.ToolCallArguments(0, 1, "{\"city\":\"Oslo\"}"),
        new LlmDelta.ToolCallStart(0, 2, "call_2", "time", false));
  }

  @Test
  void responsesAnnotationsAreCitations() {
    DialectDecoder d = decoder(Dialect.OPENAI_RESPONSES);
    String annotation = "{\"type\":\"url_citation\",\"start_index\":0,\"end_index\":5,"
        + "\"url\":\"https://example.com/\",\"title\":\"Example\"}";
    d.decode("response.output_text.annotation.added", "{\"type\":\"response.output_text.annotation.added\","
        + "\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"annotation_index\":0,"
        + "\"annotation\":" + annotation + "}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.CitationAdded(0,
        new Citation("https://example.com/", "Example", "", json(annotation))));
  }

  @Test
  void responsesCompletedNamesTheResponseItCompletes() {
    DialectDecoder d = decoder(Dialect.OPENAI_RESPONSES);
    d.decode("response.completed", "{\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\","
        + "\"model\":\"gpt-x\",\"status\":\"completed\",\"background\":true,"
        + "\"usage\":{\"input_tokens\":3,\"output_tokens\":4,\"total_tokens\":7}}}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.Metadata("resp_1", "gpt-x"),
        new LlmDelta.Usage(new TokenUsage(3, 4, 7, 0, 0)), new LlmDelta.Finish(0, FinishReason.STOP, "completed"));
    assertThat(out.terminals).isEqualTo(1);
    assertThat(d.canResume()).isTrue();
  }

  @Test
  void responsesIncompleteIsALengthFinishUnlessItsReasonSaysOtherwise() {
    DialectDecoder d = decoder(Dialect.OPENAI_RESPONSES);
    d.decode("response.incomplete", "{\"type\":\"response.incomplete\",\"response\":{\"id\":\"r\",\"model\":\"m\","
        + "\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"}}}", out);
    d.decode("response.incomplete", "{\"type\":\"response.incomplete\",\"response\":{\"id\":\"r\",\"model\":\"m\","
        + "\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"content_filter\"}}}", out);
    d.decode("response.incomplete", "{\"type\":\"response.incomplete\",\"response\":{\"id\":\"r\",\"model\":\"m\","
        + "\"status\":\"incomplete\",\"incomplete_details\":null}}", out);
    d.decode("response.incomplete", "{\"type\":\"response.incomplete\",\"response\":{\"id\":\"r\",\"model\":\"m\","
        + "\"incomplete_details\":{\"reason\":\"stop\"}}}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.Metadata("r", "m"),
        new LlmDelta.Finish(0, FinishReason.LENGTH, "max_output_tokens"),
        new LlmDelta.Finish(0, FinishReason.CONTENT_FILTER, "content_filter"),
        new LlmDelta.Finish(0, FinishReason.LENGTH, "incomplete"),
        new LlmDelta.Finish(0, FinishReason.LENGTH, "stop"));
    assertThat(out.terminals).isEqualTo(4);
  }

  @Test
  void responsesFailedReportsTheResponsesErrorAndItsUsage() {
    DialectDecoder d = decoder(Dialect.OPENAI_RESPONSES);
    d.decode("response.failed", "{\"type\":\"response.failed\",\"sequence_number\":9,\"response\":{\"id\":\"r\","
        + "\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"boom\"},"
        + "\"usage\":{\"input_tokens\":5,\"output_tokens\":1,\"total_tokens\":6}}}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.Usage(new TokenUsage(5, 1, 6, 0, 0)));
    assertThat(out.failures).singleElement().satisfies(e -> {
      assertThat(e.errorCode()).isEqualTo("server_error");
      assertThat(e).hasMessageContaining("boom");
    });
    assertThat(out.terminals).isZero();
  }

  @Test
  void responsesFailedWithoutAnErrorObjectReportsTheEventItself() {
    DialectDecoder d = decoder(Dialect.OPENAI_RESPONSES);
    d.decode("response.failed", "{\"type\":\"response.failed\",\"response\":{\"status\":\"failed\"}}", out);

    assertThat(out.deltas).isEmpty();
    assertThat(out.failures).singleElement().satisfies(e -> {
      assertThat(e.errorType()).isEqualTo("response.failed");
      assertThat(e.errorCode()).isEmpty();
    });
  }

  @Test
  void responsesErrorEventIsAFailure() {
    DialectDecoder d = decoder(Dialect.OPENAI_RESPONSES);
    d.decode("error", "{\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"slow down\","
        + "\"param\":null,\"sequence_number\":2}", out);

    assertThat(out.deltas).isEmpty();
    assertThat(out.failures).singleElement().satisfies(e -> {
      assertThat(e.errorCode()).isEqualTo("rate_limit_exceeded");
      assertThat(e).hasMessageContaining("slow down");
    });
  }

  @Test
  void responsesOutputItemsNotOtherwiseModelledAreDeliveredWholeWhenDone() {
    DialectDecoder d = decoder(Dialect.OPENAI_RESPONSES);
    String item = "{\"type\":\"web_search_call\",\"id\":\"ws_1\",\"status\":\"completed\","
        + "\"action\":{\"type\":\"search\",\"query\":\"weather\"}}";
    d.decode("response.output_item.done", "{\"type\":\"response.output_item.done\",\"output_index\":0,"
        + "\"item\":" + item + "}", out);
    d.decode("response.output_item.done", "{\"type\":\"response.output_item.done\",\"output_index\":1,"
        + "\"item\":{\"type\":\"message\",\"id\":\"msg_1\",\"content\":[]}}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.Output(0, "web_search_call", json(item)));
  }

  // ---- Gemini ----

  @Test
  void geminiBlockedPromptFinishesWithContentFilterAndEndsTheStream() {
    DialectDecoder d = decoder(Dialect.GEMINI);
    d.decode("message", "{\"promptFeedback\":{\"blockReason\":\"SAFETY\"},\"modelVersion\":\"g\","
        + "\"responseId\":\"r1\"}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.Metadata("r1", "g"),
        new LlmDelta.Finish(0, FinishReason.CONTENT_FILTER, "SAFETY"));
    assertThat(d.endIsTerminal()).isTrue();
  }

  @Test
  void geminiChunkWithoutCandidatesOrBlockReasonDoesNotFinish() {
    DialectDecoder d = decoder(Dialect.GEMINI);
    d.decode("message", "{\"usageMetadata\":{\"promptTokenCount\":2,\"totalTokenCount\":2},"
        + "\"modelVersion\":\"g\",\"responseId\":\"r1\"}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.Metadata("r1", "g"),
        new LlmDelta.Usage(new TokenUsage(2, 0, 2, 0, 0)));
    assertThat(d.endIsTerminal()).isFalse();
  }

  @Test
  void geminiBlockReasonBesideCandidatesLeavesTheFinishToTheCandidate() {
    DialectDecoder d = decoder(Dialect.GEMINI);
    d.decode("message", "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"ok\"}]},"
        + "\"index\":0}],\"promptFeedback\":{\"blockReason\":\"OTHER\"}}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.Text(0, "ok"));
    assertThat(d.endIsTerminal()).isFalse();
  }

  @Test
  void geminiCandidatesWithoutAnIndexAreNumberedByPosition() {
    DialectDecoder d = decoder(Dialect.GEMINI);
    d.decode("message", "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"a\"}]}},"
        + "{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"b\"}]}},"
        + "{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"c\"}]},\"index\":0}]}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.Text(0, "a"), new LlmDelta.Text(1, "b"),
        new LlmDelta.Text(0, "c"));
  }

  @Test
  void geminiCitationsAreDelivered() {
    DialectDecoder d = decoder(Dialect.GEMINI);
    String citation = "{\"startIndex\":0,\"endIndex\":4,\"uri\":\"https://example.org/x\",\"title\":\"X\","
        + "\"license\":\"mit\"}";
    d.decode("message", "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"quote\"}]},"
        + "\"citationMetadata\":{\"citations\":[" + citation + "]},\"index\":0}]}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.Text(0, "quote"),
        new LlmDelta.CitationAdded(0, new Citation("https://example.org/x", "X", "", json(citation))));
  }

  @Test
  void geminiFunctionCallsOfACandidateAreNumberedFromZeroAndMakeTheFinishToolCalls() {
    DialectDecoder d = decoder(Dialect.GEMINI);
    d.decode("message", "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":["
        + "{\"functionCall\":{\"name\":\"weather\",\"args\":{\"city\":\"Paris\"}}},"
        + "{\"functionCall\":{\"name\":\"time\"}}]},\"finishReason\":\"STOP\",\"index\":0}]}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.ToolCallStart(0, 0, "", "weather", false),
        new LlmDelta.ToolCallArguments(0, 0, "{\"city\":\"Paris\"}"),
        new LlmDelta.ToolCallStart(0, 1, "", "time", false),
        new LlmDelta.ToolCallArguments(0, 1, "{}"),
        new LlmDelta.Finish(0, FinishReason.TOOL_CALLS, "STOP"));
    assertThat(d.endIsTerminal()).isTrue();
  }

  @Test
  void geminiOtherPartsAreDeliveredWholeAndABareThoughtSignatureOnlyAsASignature() {
    DialectDecoder d = decoder(Dialect.GEMINI);
    String code = "{\"executableCode\":{\"language\":\"PYTHON\",\"code\":\"print(1)\"}}";
    String signed = "{\"codeExecutionResult\":{\"outcome\":\"OUTCOME_OK\",\"output\":\"1\"},"
        + "\"thoughtSignature\":\"sig-a\"}";
    d.decode("message", "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[" + code + "," + signed
        + ",{\"thoughtSignature\":\"sig-b\"},{}]},\"index\":0}]}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.Output(0, "executableCode", json(code)),
        new LlmDelta.Output(0, "codeExecutionResult", json(signed)),
        new LlmDelta.ReasoningSignature(0, "sig-a"),
        new LlmDelta.ReasoningSignature(0, "sig-b"),
        new LlmDelta.Output(0, "part", json("{}")));
  }

  // ---- Anthropic ----

  @Test
  void anthropicEventsWithoutAnSseEventNameAreDecodedByTheirTypeField() {
    DialectDecoder d = decoder(Dialect.ANTHROPIC_MESSAGES);
    d.decode("message", "{\"type\":\"content_block_delta\",\"index\":0,"
        + "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}", out);
    d.decode("message", "{\"type\":\"message_stop\"}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.Text(0, "Hi"));
    assertThat(out.terminals).isEqualTo(1);
  }

  @Test
  void anthropicErrorObjectOutsideAnErrorEventIsStillAFailure() {
    DialectDecoder d = decoder(Dialect.ANTHROPIC_MESSAGES);
    d.decode("message", "{\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}", out);
    d.decode("ping", "{\"type\":\"ping\"}", out);

    assertThat(out.deltas).isEmpty();
    assertThat(out.failures).singleElement().satisfies(e -> {
      assertThat(e.errorType()).isEqualTo("overloaded_error");
      assertThat(e).hasMessageContaining("Overloaded");
    });
  }

  @Test
  void anthropicTextBlockStartDeliversItsTextWhenItHasAny() {
    DialectDecoder d = decoder(Dialect.ANTHROPIC_MESSAGES);
    d.decode("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,"
        + "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}", out);
    d.decode("content_block_start", "{\"type\":\"content_block_start\",\"index\":1,"
        + "\"content_block\":{\"type\":\"text\",\"text\":\"Already here.\"}}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.Text(0, "Already here."));
  }

  @Test
  void anthropicToolUseBlockStartDeliversAnInputOnlyWhenItIsANonEmptyObject() {
    DialectDecoder d = decoder(Dialect.ANTHROPIC_MESSAGES);
    d.decode("content_block_start", "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":"
        + "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"weather\",\"input\":{}}}", out);
    d.decode("content_block_start", "{\"type\":\"content_block_start\",\"index\":2,\"content_block\":"
        + "{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\","
        + "\"input\":{\"query\":\"tides\"}}}", out);
    d.decode("content_block_start", "{\"type\":\"content_block_start\",\"index\":3,\"content_block\":"
        + "{\"type\":\"mcp_tool_use\",\"id\":\"mcptoolu_1\",\"name\":\"lookup\",\"input\":\"x\"}}", out);
    d.decode("content_block_start", "{\"type\":\"content_block_start\",\"index\":4,\"content_block\":"
        + "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"time\"}}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.ToolCallStart(0, 1, "toolu_1", "weather", false),
        new LlmDelta.ToolCallStart(0, 2, "srvtoolu_1", "web_search", true),
        new LlmDelta.ToolCallArguments(0, 2, "{\"query\":\"tides\"}"),
        new LlmDelta.ToolCallStart(0, 3, "mcptoolu_1", "lookup", true),
        new LlmDelta.ToolCallStart(0, 4, "toolu_2", "time", false));
  }

  @Test
  void anthropicThinkingBlockStartDeliversItsThinkingAndSignatureWhenPresent() {
    DialectDecoder d = decoder(Dialect.ANTHROPIC_MESSAGES);
    d.decode("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,"
        + "\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}", out);
    d.decode("content_block_start", "{\"type\":\"content_block_start\",\"index\":1,"
        + "\"content_block\":{\"type\":\"thinking\",\"thinking\":\"Hmm.\",\"signature\":\"EqQB\"}}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.Reasoning(0, "Hmm."),
        new LlmDelta.ReasoningSignature(0, "EqQB"));
  }

  @Test
  void anthropicRedactedThinkingAndOtherBlockStartsAreDelivered() {
    DialectDecoder d = decoder(Dialect.ANTHROPIC_MESSAGES);
    String result = "{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"srvtoolu_1\",\"content\":[]}";
    d.decode("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,"
        + "\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"EmwK\"}}", out);
    d.decode("content_block_start", "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":"
        + result + "}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.RedactedReasoning(0, "EmwK"),
        new LlmDelta.Output(0, "web_search_tool_result", json(result)));
  }

  // ---- Ollama ----

  @Test
  void ollamaChatThinkingIsReasoning() {
    DialectDecoder d = decoder(Dialect.OLLAMA);
    d.decode("message", "{\"model\":\"qwen3\",\"created_at\":\"2025-01-01T00:00:00Z\","
        + "\"message\":{\"role\":\"assistant\",\"content\":\"\",\"thinking\":\"Let me see.\"},\"done\":false}", out);
    d.decode("message", "{\"model\":\"qwen3\",\"created_at\":\"2025-01-01T00:00:00Z\","
        + "\"message\":{\"role\":\"assistant\",\"content\":\"Yes.\"},\"done\":false}", out);

    assertThat(out.deltas).containsExactly(new LlmDelta.Metadata("", "qwen3"),
        new LlmDelta.Reasoning(0, "Let me see."), new LlmDelta.Text(0, "Yes."));
  }
}
