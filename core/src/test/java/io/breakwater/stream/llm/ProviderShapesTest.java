package io.breakwater.stream.llm;

import static io.breakwater.stream.llm.LlmFixtures.*;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.FailureKind;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.StreamTruncatedException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Provider shapes beyond the plain streams of {@link LlmDialectsTest}: Vertex AI's streamed function-call arguments
 * that cannot be read, a Gemini body that is not an event stream, what a truncation says about non-text content, and
 * the one-pass {@link LlmStreamClient#streamAndAggregate}.
 */
class ProviderShapesTest {

  private static final String START = geminiParts("{\"functionCall\": {\"name\": \"getWeather\", \"willContinue\": "
      + "true}}");
  private static final String CLOSE = geminiParts("{\"functionCall\": {}}");
  private static final String FINISH = gemini("{\"content\": {\"role\": \"model\",\"parts\": [{\"text\": \"\"}]},"
      + "\"finishReason\": \"STOP\"}", geminiUsage(12, 3, 15, 0));

  private static LlmStreamException invalidCall(String body) {
    Throwable error = LlmDialectsTest.failure(Dialect.GEMINI, body);
    assertThat(error).isInstanceOf(LlmStreamException.class);
    LlmStreamException e = (LlmStreamException) error;
    assertThat(e.errorType()).isEqualTo("invalid_function_call");
    return e;
  }

  @Test
  void streamedArgumentsWithNoCallOpenFailTheStreamInsteadOfMakingANamelessCall() {
    LlmStreamException e = invalidCall(geminiParts(streamedArgs(true,
        streamedArg("$.location", "\"stringValue\": \"Bos\"", false))) + CLOSE + FINISH);
    assertThat(e).hasMessageContaining("no call open");
    assertThat(e.partialResponse().toolCalls()).isEmpty();
  }

  @Test
  void anEmptyFunctionCallWithNoCallOpenFailsTheStream() {
    LlmStreamException e = invalidCall(START + CLOSE + CLOSE + FINISH);
    assertThat(e).hasMessageContaining("without a name");
    assertThat(e.partialResponse().toolCalls()).extracting(ToolCall::name).containsExactly("getWeather");
  }

  @Test
  void aStreamedArgumentOutOfOrderOrGivenTwiceFailsTheStream() {
    assertThat(invalidCall(START + geminiParts(streamedArgs(true,
        streamedArg("$.stops[1]", "\"stringValue\": \"Lyon\"", false))) + CLOSE + FINISH))
        .hasMessageContaining("index 0 comes next");
    assertThat(invalidCall(START + geminiParts(streamedArgs(true,
        streamedArg("$.city", "\"stringValue\": \"Lyon\"", false),
        streamedArg("$.days", "\"numberValue\": 2", false),
        streamedArg("$.city", "\"stringValue\": \"Paris\"", false))) + CLOSE + FINISH))
        .hasMessageContaining("given twice");
    assertThat(invalidCall(START + geminiParts(streamedArgs(true,
        streamedArg("location", "\"stringValue\": \"Lyon\"", false))) + CLOSE + FINISH))
        .hasMessageContaining("not a JSON path");
    assertThat(invalidCall(START + geminiParts(streamedArgs(true,
        "{\"jsonPath\": \"$.location\", \"mysteryValue\": 1}")) + CLOSE + FINISH))
        .hasMessageContaining("without a value");
  }

  @Test
  void aCallNamedWhileAStreamedCallIsOpenFailsTheStream() {
    assertThat(invalidCall(START + START + CLOSE + FINISH)).hasMessageContaining("still open");
  }

  @Test
  void aCandidateThatFinishesWithAStreamedCallOpenFailsTheStream() {
    String body = START + geminiParts(streamedArgs(true, streamedArg("$.location", "\"stringValue\": \"Bos\"", true)))
        + FINISH;
    LlmStreamException e = invalidCall(body);
    assertThat(e).hasMessageContaining("still open");
    assertThat(e.partialResponse().toolCalls()).singleElement()
        .satisfies(call -> assertThat(call.argumentsJson()).isEqualTo("{\"location\":\"Bos"));
  }

  @Test
  void aStreamedCallClosedByItsLastPartialArgumentsIsComplete() {
    String body = START + geminiParts(streamedArgs(false, streamedArg("$.location", "\"stringValue\": \"Lyon\"",
        false))) + FINISH;
    LlmResponse r = LlmDialectsTest.assemble(Dialect.GEMINI, body);
    LlmDialectsTest.assertCalls(r.toolCalls(), "", "getWeather", "{\"location\":\"Lyon\"}");
  }

  @Test
  void aGeminiJsonArrayBodyFailsAtOnceWithoutRetrySayingToUseAltSse() {
    String array = "[{\r\n  \"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Hi\"}],\"role\": \"model\"},"
        + "\"finishReason\": \"STOP\"}]\r\n}\r\n]";
    ScriptedTransport transport = ScriptedTransport.always(array);
    LlmStreamClient client = LlmStreamClient.builder("http://127.0.0.1:9", Dialect.GEMINI).transport(transport)
        .path("/v1beta/models/gemini-bw:streamGenerateContent")
        .meterRegistry(new SimpleMeterRegistry())
        .retry(RetryPolicy.builder().name("array").maxRetries(3).budget(RetryBudget.unlimited())
            .backoff(io.breakwater.retry.Backoff.fixed(Duration.ofMillis(1))).build())
        .build();
    Throwable error = client.stream(LlmDialectsTest.REQUEST).as(LlmResponse::aggregate)
        .map(r -> (Throwable) new AssertionError("completed with " + r))
        .onErrorResume(reactor.core.publisher.Mono::just)
        .block(Duration.ofSeconds(10));
    assertThat(error).isInstanceOf(LlmStreamException.class).hasMessageContaining("alt=sse");
    assertThat(((LlmStreamException) error).failureKind()).isEqualTo(FailureKind.INVALID_ARGUMENT);
    assertThat(transport.attempts).hasSize(1);
  }

  @Test
  void aTruncationAfterReasoningOnlyDescribesTheReasoningItDelivered() {
    String body = chat(delta(0, "{\"role\":\"assistant\",\"content\":null,\"reasoning\":\"Think \"}"))
        + chat(delta(0, "{\"content\":null,\"reasoning\":\"twice.\"}"));
    Throwable error = LlmDialectsTest.failure(Dialect.OPENAI_CHAT, body);
    assertThat(error).isInstanceOf(StreamTruncatedException.class);
    StreamTruncatedException e = (StreamTruncatedException) error;
    assertThat(e.partialOutput()).isEqualTo("[reasoning]\nThink twice.");
    assertThat(e).hasMessageContaining("after 2 items (" + e.partialOutput().length() + " chars of partial output");
  }

  @Test
  void aTruncationAfterAToolCallDescribesTheCall() {
    String body = CHAT_ROLE + text("Checking.")
        + chat(delta(0, "{\"tool_calls\":[{\"index\":0,\"id\":\"call_bw\",\"type\":\"function\",\"function\":"
            + "{\"name\":\"weather\",\"arguments\":\"{\\\"city\\\":\"}}]}"));
    StreamTruncatedException e = (StreamTruncatedException) LlmDialectsTest.failure(Dialect.OPENAI_CHAT, body);
    assertThat(e.partialOutput()).isEqualTo("[text]\nChecking.\n[tool call weather call_bw]\n{\"city\":");
  }

  @Test
  void aTruncationAfterTextOnlyKeepsTheTextAsItsPartialOutput() {
    StreamTruncatedException e = (StreamTruncatedException) LlmDialectsTest.failure(Dialect.OPENAI_CHAT,
        CHAT_ROLE + text("Lyon is"));
    assertThat(e.partialOutput()).isEqualTo("Lyon is");
  }

  @Test
  void streamAndAggregateSendsOneRequestGivesEveryDeltaAndEndsWithTheResponse() {
    ScriptedTransport transport = ScriptedTransport.always(CHAT_TOOLS.body());
    LlmStreamClient client = LlmDialectsTest.client(Dialect.OPENAI_CHAT, transport);
    List<LlmDelta> seen = new CopyOnWriteArrayList<>();
    LlmResponse response = client.streamAndAggregate(LlmDialectsTest.REQUEST, seen::add)
        .block(Duration.ofSeconds(10));
    assertThat(transport.attempts).hasSize(1);
    assertThat(seen).last().isInstanceOf(LlmDelta.Done.class);
    assertThat(response).isEqualTo(LlmResponse.aggregate(reactor.core.publisher.Flux.fromIterable(seen))
        .block(Duration.ofSeconds(1)));
    LlmDialectsTest.assertCalls(response.toolCalls(), "call_bwA", "find_trains",
        "{\"from\": \"Paris\", \"to\": \"Lyon\"}", "call_bwB", "weather", "{\"city\":\"Lyon\"}");
  }

  @Test
  void streamAndAggregateFailsWithWhatTheConsumerThrewAndStopsTheCall() {
    ScriptedTransport transport = ScriptedTransport.always(CHAT_ROLE + text("Lyon"), ScriptedTransport.NEVER);
    LlmStreamClient client = LlmDialectsTest.client(Dialect.OPENAI_CHAT, transport);
    IllegalStateException boom = new IllegalStateException("ui closed");
    Throwable error = client.streamAndAggregate(LlmDialectsTest.REQUEST, d -> {
          throw boom;
        })
        .map(r -> (Throwable) new AssertionError("completed with " + r))
        .onErrorResume(reactor.core.publisher.Mono::just)
        .block(Duration.ofSeconds(10));
    assertThat(error).isSameAs(boom);
    assertThat(transport.cancelled).containsExactly(1);
  }
}
