package io.breakwater.examples.llm;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.LlmCallEvent;
import io.breakwater.stream.llm.LlmResponse;
import io.breakwater.stream.llm.LlmStreamClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The LLM snippets of docs/stream.md against loopback servers. */
class LlmStreamsIT {

  static final Map<String, Object> REQUEST = Map.of("model", "m", "messages", List.of());
  static final Duration WAIT = Duration.ofSeconds(30);

  static String chunk(String choice) {
    return "data: {\"id\":\"chatcmpl-x\",\"model\":\"m\",\"choices\":[" + choice + "]}\n\n";
  }

  static String text(String text) {
    return chunk("{\"index\":0,\"delta\":{\"content\":\"" + text + "\"},\"finish_reason\":null}");
  }

  static String finish(String reason) {
    return chunk("{\"index\":0,\"delta\":{},\"finish_reason\":\"" + reason + "\"}");
  }

  static final String DONE = "data: [DONE]\n\n";

  @Test
  void theAggregateGivesTheTextOrTheToolsToRun() {
    String tools = chunk("{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"function\":"
        + "{\"name\":\"weather\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}") + finish("tool_calls") + DONE;
    try (LoopbackSse server = LoopbackSse.sse(text("Lyon") + text(" in May") + finish("stop") + DONE, tools)) {
      LlmStreamClient client = LlmStreamClient.builder(server.baseUrl(), Dialect.OPENAI_CHAT).build();
      assertThat(LlmStreams.answer(client, REQUEST).block(WAIT)).isEqualTo("Lyon in May");
      assertThat(LlmStreams.answer(client, REQUEST).block(WAIT)).isEqualTo("run [weather]");
    }
  }

  @Test
  void onePassShowsEveryFragmentAndKeepsTheAnswerWithOneRequest() {
    List<String> shown = new CopyOnWriteArrayList<>();
    try (LoopbackSse server = LoopbackSse.sse(text("Lyon") + text(" in May") + finish("stop") + DONE)) {
      LlmStreamClient client = LlmStreamClient.builder(server.baseUrl(), Dialect.OPENAI_CHAT).build();
      LlmResponse answer = LlmStreams.showAndKeep(client, REQUEST, shown::add).block(WAIT);
      assertThat(shown).containsExactly("Lyon", " in May");
      assertThat(answer.text()).isEqualTo("Lyon in May");
      assertThat(answer.completed()).isTrue();
      assertThat(server.requests()).isEqualTo(1);
    }
  }

  @Test
  void everyEndingIsHandledByType() {
    String length = text("Lyon has") + finish("length") + DONE;
    String serverError = text("Lyon") + "event: error\ndata: {\"error\":{\"type\":\"server_error\","
        + "\"message\":\"boom\"}}\n\n";
    String cut = text("Lyon is");
    try (LoopbackSse server = LoopbackSse.sse(length, serverError, cut)) {
      LlmStreamClient client = LlmStreamClient.builder(server.baseUrl(), Dialect.OPENAI_CHAT).build();
      assertThat(LlmStreams.answerOrExplain(client, REQUEST).block(WAIT)).isEqualTo("Lyon has [cut: LENGTH]");
      assertThat(LlmStreams.answerOrExplain(client, REQUEST).block(WAIT)).isEqualTo("Lyon [server: server_error]");
      assertThat(LlmStreams.answerOrExplain(client, REQUEST).block(WAIT)).isEqualTo("Lyon is [cut off]");
    }
    try (LoopbackSse stalled = new LoopbackSse("text/event-stream", Duration.ofSeconds(30), text("Lyon"))) {
      LlmStreamClient client = LlmStreams.tuned(stalled.baseUrl(), e -> { });
      assertThat(LlmStreams.answerOrExplain(client, REQUEST).block(WAIT)).isEqualTo("Lyon [timed out]");
    }
  }

  @Test
  void theTunedClientReportsEachCall() {
    List<LlmCallEvent> calls = new CopyOnWriteArrayList<>();
    try (LoopbackSse server = LoopbackSse.sse(text("Bonjour") + finish("stop") + DONE)) {
      LlmStreamClient client = LlmStreams.tuned(server.baseUrl(), calls::add);
      assertThat(LlmStreams.answer(client, REQUEST).block(WAIT)).isEqualTo("Bonjour");
    }
    assertThat(calls).singleElement().satisfies(e -> {
      assertThat(e.outcome()).isEqualTo(LlmCallEvent.Outcome.COMPLETED);
      assertThat(e.attempts()).isEqualTo(1);
      assertThat(e.timeToFirstContent()).isNotNull();
    });
  }

  @Test
  void everyDialectSpeaksToItsPath() {
    String anthropic = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\","
        + "\"model\":\"c\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
        + "\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\nevent: message_stop\ndata: {\"type\":"
        + "\"message_stop\"}\n\n";
    String gemini = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"ok\"}]},\"finishReason\":\"STOP\"}]}"
        + "\r\n\r\n";
    String responses = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
        + "\"sequence_number\":1,\"delta\":\"ok\"}\n\nevent: response.completed\ndata: {\"type\":"
        + "\"response.completed\",\"sequence_number\":2,\"response\":{\"id\":\"resp_1\",\"status\":\"completed\"}}\n\n";
    String ollama = "{\"model\":\"l\",\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},\"done\":false}\n"
        + "{\"model\":\"l\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":"
        + "\"stop\"}\n";
    String compatible = text("ok") + finish("stop") + DONE;
    try (LoopbackSse server = LoopbackSse.sse(anthropic, gemini, responses, ollama, compatible)) {
      for (LlmStreamClient client : LlmStreams.providers(server.baseUrl(), "key")) {
        assertThat(LlmStreams.answer(client, REQUEST).block(WAIT)).isEqualTo("ok");
      }
      assertThat(server.paths).containsExactly("/v1/messages",
          "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "/v1/responses", "/api/chat",
          "/v1/chat/completions");
    }
  }
}
