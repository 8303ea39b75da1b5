package io.breakwater.stream.llm;

import static io.breakwater.stream.llm.LlmFixtures.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.failure.FailureKind;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.StreamTruncatedException;
import io.breakwater.stream.llm.LlmFixtures.Fixture;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Mono;

/**
 * Every dialect on streams in its own format ({@link LlmFixtures}): each is assembled into the expected
 * {@link LlmResponse} whole, in random 1–7 byte chunks (code points split too), and, cut before its terminal event,
 * ends in a truncation that carries the partial response.
 */
class LlmDialectsTest {

  static final Map<String, Object> REQUEST = Map.of("model", "m", "messages", List.of());
  private static final ObjectMapper JSON = new ObjectMapper();

  static LlmStreamClient client(Dialect dialect, ScriptedTransport transport) {
    LlmStreamClient.Builder b = LlmStreamClient.builder("http://127.0.0.1:9", dialect).transport(transport)
        .meterRegistry(new SimpleMeterRegistry())
        .retry(RetryPolicy.builder().name("dialects").maxRetries(0).budget(RetryBudget.unlimited()).build());
    if (dialect == Dialect.GEMINI) {
      b.path("/v1beta/models/gemini-bw:streamGenerateContent?alt=sse");
    }
    return b.build();
  }

  /** The assembled response, also when the stream ended incomplete. */
  static LlmResponse assemble(Dialect dialect, Object... steps) {
    return client(dialect, ScriptedTransport.always(steps)).stream(REQUEST).as(LlmResponse::aggregate)
        .onErrorResume(LlmIncompleteException.class, e -> Mono.just(e.response()))
        .block(Duration.ofSeconds(10));
  }

  static Throwable failure(Dialect dialect, Object... steps) {
    return client(dialect, ScriptedTransport.always(steps)).stream(REQUEST).as(LlmResponse::aggregate)
        .map(r -> (Throwable) new AssertionError("completed with " + r))
        .onErrorResume(Mono::just)
        .block(Duration.ofSeconds(10));
  }

  static final Map<Fixture, Consumer<LlmResponse>> EXPECTED = new LinkedHashMap<>();

  static {
    EXPECTED.put(CHAT_TEXT, r -> {
      assertThat(r.text()).isEqualTo("Lyon is lovely in spring.");
      assertThat(r.id()).isEqualTo("chatcmpl-bw7");
      assertThat(r.model()).isEqualTo("gpt-bw");
      assertFinish(r, FinishReason.STOP, "stop");
      assertThat(r.usage()).isEqualTo(new TokenUsage(21, 5, 26, 8, 0));
    });
    EXPECTED.put(CHAT_CRLF, r -> assertThat(r.text()).isEqualTo("Lyon is lovely in spring."));
    EXPECTED.put(CHAT_TOOLS, r -> {
      assertThat(r.text()).isEmpty();
      assertCalls(r.toolCalls(), "call_bwA", "find_trains", "{\"from\": \"Paris\", \"to\": \"Lyon\"}",
          "call_bwB", "weather", "{\"city\":\"Lyon\"}");
      assertFinish(r, FinishReason.TOOL_CALLS, "tool_calls");
      assertThat(r.usage().totalTokens()).isEqualTo(120);
    });
    EXPECTED.put(CHAT_REFUSAL, r -> {
      assertThat(r.text()).isEmpty();
      assertThat(r.refusal()).isEqualTo("I can't help with that.");
      assertFinish(r, FinishReason.STOP, "stop");
    });
    EXPECTED.put(CHAT_N2, r -> {
      assertThat(r.choices()).extracting(LlmChoice::index).containsExactly(0, 1);
      assertThat(r.choice(0).text()).isEqualTo("Oui, volontiers");
      assertThat(r.choice(1).text()).isEqualTo("Non, merci");
      assertThat(r.choices()).extracting(LlmChoice::finishReason).containsOnly(FinishReason.STOP);
    });
    EXPECTED.put(CHAT_LENGTH, r -> {
      assertThat(r.text()).isEqualTo("{\"");
      assertFinish(r, FinishReason.LENGTH, "length");
    });
    EXPECTED.put(CHAT_USAGE_IN_FINISH, r -> {
      assertThat(r.text()).isEqualTo("Bonjour !");
      assertThat(r.id()).isEqualTo("bw9f");
      assertThat(r.usage()).isEqualTo(new TokenUsage(7, 3, 10, 0, 0));
    });
    EXPECTED.put(DEEPSEEK_REASONING, r -> {
      assertThat(r.text()).isEqualTo("Hi! \uD83D\uDC4B");
      assertThat(r.reasoning()).isEqualTo("The user greets; greet back.");
      assertThat(r.usage()).isEqualTo(new TokenUsage(5, 20, 25, 2, 15));
    });
    EXPECTED.put(GROQ_TOOL_REASONING, r -> {
      assertThat(r.text()).isEmpty();
      assertThat(r.reasoning()).isEqualTo("Need the tool.");
      assertCalls(r.toolCalls(), "fc_bw1", "lookup", "{\"q\":\"Lyon\"}");
      assertFinish(r, FinishReason.TOOL_CALLS, "tool_calls");
      assertThat(r.usage()).isEqualTo(new TokenUsage(100, 12, 112, 0, 4));
    });
    EXPECTED.put(MISTRAL_THINKING, r -> {
      assertThat(r.text()).isEqualTo("Wait for green.");
      assertThat(r.reasoning()).isEqualTo("Look both ways first.");
      assertThat(r.usage()).isEqualTo(new TokenUsage(4, 10, 14, 0, 0));
    });
    EXPECTED.put(OPENROUTER_REASONING, r -> {
      assertThat(r.text()).isEqualTo("3 + 4 = 7");
      assertThat(r.reasoning()).isEqualTo("Simple sum.");
      assertThat(r.choice().reasoningSignatures()).containsExactly("sig-bw");
      assertThat(r.usage()).isEqualTo(new TokenUsage(20, 9, 29, 0, 3));
    });
    EXPECTED.put(VLLM_COMPLETIONS, r -> {
      assertThat(r.text()).isEqualTo("Hello there");
      assertFinish(r, FinishReason.LENGTH, "length");
      assertThat(r.usage()).isNull();
    });
    EXPECTED.put(RESPONSES_TEXT, r -> {
      assertThat(r.text()).isEqualTo("Pack an umbrella.");
      assertThat(r.id()).isEqualTo("resp_bw1");
      assertThat(r.model()).isEqualTo("gpt-bw-r");
      assertFinish(r, FinishReason.STOP, "completed");
      assertThat(r.usage()).isEqualTo(new TokenUsage(10, 2, 12, 0, 0));
    });
    EXPECTED.put(RESPONSES_FUNCTION, r -> {
      assertCalls(r.toolCalls(), "call_bwR", "convert", "{\"eur\":12}");
      assertFinish(r, FinishReason.TOOL_CALLS, "completed");
      assertThat(r.usage().outputTokens()).isEqualTo(9);
    });
    EXPECTED.put(RESPONSES_REASONING, r -> {
      assertThat(r.reasoning()).isEqualTo("**Weighing** the request");
      assertThat(r.choice().redactedReasoning()).containsExactly("gAAAA-bw");
      assertThat(r.refusal()).isEqualTo("No.");
      assertThat(r.text()).isEmpty();
      assertThat(r.usage().reasoningTokens()).isEqualTo(50);
    });
    EXPECTED.put(RESPONSES_INCOMPLETE, r -> {
      assertThat(r.text()).isEqualTo("The first");
      assertFinish(r, FinishReason.LENGTH, "max_output_tokens");
      assertThat(r.usage().outputTokens()).isEqualTo(2);
    });
    EXPECTED.put(ANTHROPIC_TEXT, r -> {
      assertThat(r.text()).isEqualTo("Take the TGV.");
      assertThat(r.id()).isEqualTo("msg_bw1");
      assertThat(r.model()).isEqualTo("claude-bw");
      assertFinish(r, FinishReason.STOP, "end_turn");
      assertThat(r.usage()).isEqualTo(new TokenUsage(25, 6, 31, 3, 0));
    });
    EXPECTED.put(ANTHROPIC_TOOL, r -> {
      assertThat(r.text()).isEqualTo("Checking.");   // the tool's JSON never leaks into the text
      assertCalls(r.toolCalls(), "toolu_bw", "book", "{\"seat\": \"12A\"}");
      assertFinish(r, FinishReason.TOOL_CALLS, "tool_use");
      assertThat(r.usage().inputTokens()).isEqualTo(300);
      assertThat(r.usage().outputTokens()).isEqualTo(30);
    });
    EXPECTED.put(ANTHROPIC_THINKING, r -> {
      assertThat(r.text()).isEqualTo("Lyon.");
      assertThat(r.reasoning()).isEqualTo("Two cities; compare.");
      assertThat(r.choice().reasoningSignatures()).containsExactly("EuYBsig");
      assertThat(r.choice().redactedReasoning()).containsExactly("EqBWredacted");
      assertThat(r.usage().reasoningTokens()).isEqualTo(70);
    });
    EXPECTED.put(ANTHROPIC_WEB_SEARCH, r -> {
      assertThat(r.text()).isEqualTo("Sunny, 24 degrees.");
      assertThat(r.toolCalls()).isEmpty();
      assertCalls(r.choice().serverToolCalls(), "srvtoolu_bw", "web_search", "{\"query\": \"Lyon weather\"}");
      assertThat(r.choice().citations()).singleElement().satisfies(c -> {
        assertThat(c.url()).isEqualTo("https://example.org/lyon");
        assertThat(c.title()).isEqualTo("Forecast");
        assertThat(c.citedText()).isEqualTo("Sunny all week");
      });
      assertThat(r.choice().otherOutput()).singleElement()
          .satisfies(o -> assertThat(o.type()).isEqualTo("web_search_tool_result"));
      assertFinish(r, FinishReason.PAUSE, "pause_turn");
      assertThat(r.usage().inputTokens()).isEqualTo(9000);   // message_delta repeats it: the later count wins
      assertThat(r.usage().outputTokens()).isEqualTo(120);
    });
    EXPECTED.put(GEMINI_TEXT, r -> {
      assertThat(r.text()).isEqualTo("Bonjour !\n");
      assertThat(r.id()).isEqualTo("bwGem1");
      assertThat(r.model()).isEqualTo("gemini-bw");
      assertFinish(r, FinishReason.STOP, "STOP");
      assertThat(r.usage()).isEqualTo(new TokenUsage(5, 3, 8, 0, 0));
    });
    EXPECTED.put(GEMINI_THOUGHTS, r -> {
      assertThat(r.reasoning()).isEqualTo("**Plan** the walk");
      assertThat(r.text()).isEqualTo("Cross at the lights.");
      assertThat(r.choice().reasoningSignatures()).containsExactly("CiQBsig");
      assertThat(r.usage()).isEqualTo(new TokenUsage(9, 5, 35, 0, 21));
    });
    EXPECTED.put(GEMINI_FUNCTION, r -> {
      assertThat(r.text()).isEmpty();
      assertCalls(r.toolCalls(), "", "capital", "{\"country\":\"France\"}");
      assertFinish(r, FinishReason.TOOL_CALLS, "STOP");
      assertThat(r.choice().reasoningSignatures()).containsExactly("CiwBsig");
    });
    EXPECTED.put(VERTEX_STREAMED_ARGS, r -> {
      assertCalls(r.toolCalls(), "", "getWeather", "{\"location\":\"Boston\"}",
          "fc-2", "getWeather", "{\"location\":\"San \\\"Francisco\",\"days\":3,\"units\":{\"metric\":true,"
              + "\"wind\":null},\"stops\":[\"Oakland\",{\"zip code\":94607.5}]}");
      assertFinish(r, FinishReason.TOOL_CALLS, "STOP");
    });
    EXPECTED.put(GEMINI_CITATION_SOURCES, r -> {
      assertThat(r.text()).isEqualTo("Lyon lies where two rivers meet.");
      assertThat(r.choice().citations()).extracting(Citation::url).containsExactly("https://example.org/rivers");
    });
    EXPECTED.put(CHAT_ANNOTATIONS, r -> {
      assertThat(r.text()).isEqualTo("Lyon has two stations [1].");
      assertThat(r.choice().citations()).extracting(Citation::url, Citation::title, Citation::citedText)
          .containsExactly(tuple("https://example.org/lyon", "Lyon stations",
              "Part-Dieu and Perrache"), tuple("https://example.org/sncf", "SNCF", ""));
      assertFinish(r, FinishReason.STOP, "stop");
    });
    EXPECTED.put(OLLAMA_CHAT, r -> {
      assertThat(r.text()).isEqualTo("Why not Lyon?");
      assertThat(r.model()).isEqualTo("llama-bw");
      assertFinish(r, FinishReason.STOP, "stop");
      assertThat(r.usage()).isEqualTo(new TokenUsage(11, 4, 15, 0, 0));
    });
    EXPECTED.put(OLLAMA_GENERATE, r -> {
      assertThat(r.text()).isEqualTo("Yes.");
      assertThat(r.reasoning()).isEqualTo("Hmm.");
      assertFinish(r, FinishReason.LENGTH, "length");
    });
    EXPECTED.put(OLLAMA_TOOLS, r -> {
      assertCalls(r.toolCalls(), "", "weather", "{\"city\":\"Lyon\"}");
      assertFinish(r, FinishReason.TOOL_CALLS, "stop");
    });
  }

  static Stream<Fixture> fixtures() {
    return EXPECTED.keySet().stream();
  }

  static void assertFinish(LlmResponse r, FinishReason reason, String raw) {
    assertThat(r.finishReason()).isEqualTo(reason);
    assertThat(r.choice().rawFinishReason()).isEqualTo(raw);
  }

  /** Calls as (id, name, arguments JSON) triples; arguments compared as JSON. */
  static void assertCalls(List<ToolCall> calls, String... expected) {
    assertThat(calls).hasSize(expected.length / 3);
    for (int i = 0; i < calls.size(); i++) {
      ToolCall call = calls.get(i);
      assertThat(call.id()).isEqualTo(expected[3 * i]);
      assertThat(call.name()).isEqualTo(expected[3 * i + 1]);
      try {
        assertThat(call.arguments()).isEqualTo(JSON.readTree(expected[3 * i + 2]));
      } catch (java.io.IOException e) {
        throw new AssertionError(e);
      }
      assertThat(call.argumentsJson()).isEqualTo(expected[3 * i + 2]);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("fixtures")
  void aStreamAssemblesIntoItsResponse(Fixture fixture) {
    LlmResponse response = assemble(fixture.dialect(), fixture.body());
    EXPECTED.get(fixture).accept(response);
    assertThat(response.completed()).isTrue();
    assertThat(response.attempts()).isEqualTo(1);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("fixtures")
  void howTheBytesAreChunkedChangesNothing(Fixture fixture) {
    LlmResponse whole = assemble(fixture.dialect(), fixture.body());
    for (int seed = 0; seed < 20; seed++) {
      LlmResponse chunked = assemble(fixture.dialect(), ScriptedTransport.chunked(fixture.body(), new Random(seed)));
      assertThat(chunked).as("seed %d", seed).isEqualTo(whole);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("fixtures")
  void aStreamCutBeforeItsTerminalEventIsATruncationCarryingThePartialResponse(Fixture fixture) {
    LlmResponse whole = assemble(fixture.dialect(), fixture.body());
    Throwable error = failure(fixture.dialect(), fixture.cutBeforeTerminal());
    assertThat(error).isInstanceOf(StreamTruncatedException.class).hasNoCause();
    assertThat(((StreamTruncatedException) error).failureKind()).isEqualTo(FailureKind.CONNECTION);
    LlmResponse partial = LlmResponse.partialOf(error).orElseThrow();
    assertThat(partial.completed()).isFalse();
    assertThat(whole.text()).startsWith(partial.text());
    // the text alone when only text came, else every kind delivered under its label
    String output = ((StreamTruncatedException) error).partialOutput();
    assertThat(output).contains(partial.text());
    if (partial.reasoning().isEmpty() && partial.toolCalls().isEmpty() && partial.choices().size() == 1
        && partial.choice().otherOutput().isEmpty() && partial.choice().reasoningSignatures().isEmpty()
        && partial.choice().redactedReasoning().isEmpty() && partial.choice().serverToolCalls().isEmpty()
        && partial.choice().citations().isEmpty() && partial.refusal().isEmpty()) {
      assertThat(output).isEqualTo(partial.text());
    }
    assertThat(error).hasMessageContaining("(" + output.length() + " chars of partial output attached)");
  }

  @Test
  void anErrorEventOnAnHttp200StreamAfterReasoningIsAServerErrorWithThePartialResponse() {
    Throwable error = failure(Dialect.OPENAI_CHAT, GROQ_ERROR_EVENT);
    assertThat(error).isInstanceOf(LlmStreamException.class);
    LlmStreamException e = (LlmStreamException) error;
    assertThat(e.errorType()).isEqualTo("invalid_request_error");
    assertThat(e.errorCode()).isEqualTo("tool_use_failed");
    assertThat(e.failureKind()).isEqualTo(FailureKind.INVALID_ARGUMENT);
    assertThat(e.partialResponse().reasoning()).isEqualTo("Try the tool");
    assertThat(e).hasMessageContaining("Tool call validation failed");
  }

  @Test
  void anInBandErrorObjectAfterALengthFinishKeepsTheFinishAndTheUsage() {
    Throwable error = failure(Dialect.OPENAI_CHAT, OPENROUTER_MIDSTREAM_ERROR);
    assertThat(error).isInstanceOf(LlmStreamException.class);
    LlmStreamException e = (LlmStreamException) error;
    assertThat(e.errorCode()).isEqualTo("400");
    assertThat(e.failureKind()).isEqualTo(FailureKind.INVALID_ARGUMENT);
    assertThat(e.partialResponse().finishReason()).isEqualTo(FinishReason.LENGTH);
    assertThat(e.partialResponse().usage()).isEqualTo(new TokenUsage(11, 10, 21, 0, 0));
    assertThat(e.partialResponse().reasoning()).isEqualTo("Greeting");
  }

  @Test
  void anUnterminatedLastEventIsDiscardedSoTheStreamIsTruncated() {
    String body = ANTHROPIC_TEXT.body();
    Throwable error = failure(Dialect.ANTHROPIC_MESSAGES, body.substring(0, body.length() - 2));  // no blank line
    assertThat(error).isInstanceOf(StreamTruncatedException.class).hasNoCause();
    assertThat(LlmResponse.partialOf(error).orElseThrow().text()).isEqualTo("Take the TGV.");
  }

  @Test
  void hostileNumbersAndIndexesAreClampedOrIgnored() {
    String body = chat("{\"index\":-3,\"delta\":{\"content\":\"neg\"}},{\"index\":2147483647,\"delta\":"
            + "{\"content\":\"max\",\"tool_calls\":[{\"index\":-2147483648,\"id\":\"c\",\"function\":{\"name\":"
            + "\"f\",\"arguments\":\"{}\"}}]}}")
        + "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":-5,\"completion_tokens\":1e400,"
        + "\"total_tokens\":\"many\",\"prompt_tokens_details\":{\"cached_tokens\":99999999999999999999999}}}\n\n"
        + CHAT_DONE;
    LlmResponse r = assemble(Dialect.OPENAI_CHAT, body);
    assertThat(r.choice(0).text()).isEqualTo("neg");
    assertThat(r.choice(Integer.MAX_VALUE).text()).isEqualTo("max");
    assertThat(r.choice(Integer.MAX_VALUE).toolCalls()).extracting(ToolCall::index).containsExactly(Integer.MIN_VALUE);
    assertThat(r.usage()).isEqualTo(new TokenUsage(0, Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, 0));
  }
}
