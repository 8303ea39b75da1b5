package io.breakwater.stream.llm;

import static io.breakwater.stream.llm.LlmFixtures.CHAT_DONE;
import static io.breakwater.stream.llm.LlmFixtures.CHAT_ROLE;
import static io.breakwater.stream.llm.LlmFixtures.chat;
import static io.breakwater.stream.llm.LlmFixtures.delta;
import static io.breakwater.stream.llm.LlmFixtures.finish;
import static io.breakwater.stream.llm.LlmFixtures.text;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.stream.EventTooLargeException;
import io.breakwater.stream.StreamTruncatedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * {@code maxResponseBytes} bounds everything the client keeps of a response, not only its text: entries that carry no
 * text (empty tool-call starts, choices that only finish) and the raw JSON of citations count too.
 */
class LlmResponseBoundTest {

  static final int BOUND = 64 * 1024;
  static final int EVENTS = 2_000;

  /** A stream of {@code EVENTS} events after a first text, each built by {@code event}, that ends normally. */
  private static ScriptedTransport stream(IntFunction<String> event) {
    List<Object> steps = new ArrayList<>(EVENTS + 3);
    steps.add(CHAT_ROLE);
    steps.add(text("hi"));
    for (int i = 0; i < EVENTS; i++) {
      steps.add(event.apply(i));
    }
    steps.add(CHAT_DONE);
    return ScriptedTransport.always(steps.toArray());
  }

  /** Streams {@code transport}; asserts it fails as too large and that what it kept, by {@code kept}, is small. */
  private static void assertRefusedOnceTheBoundIsPassed(ScriptedTransport transport, ToLongFunction<LlmResponse> kept,
      long maxKept) {
    LlmStreamClient client = LlmStreamClient.builder("http://127.0.0.1:9", Dialect.OPENAI_CHAT).transport(transport)
        .maxResponseBytes(BOUND).build();
    StepVerifier.withVirtualTime(() -> client.stream(Map.of("model", "m", "messages", List.of())))
        .thenConsumeWhile(delta -> true)
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(StreamTruncatedException.class).hasCauseInstanceOf(EventTooLargeException.class);
          assertThat(e.getCause()).hasMessageContaining("maxResponseBytes");
          assertThat(kept.applyAsLong(LlmResponse.partialOf(e).orElseThrow())).isLessThanOrEqualTo(maxKept);
        })
        .verify(Duration.ofSeconds(30));
  }

  @Test
  void toolCallStartsWithoutIdOrNameCountAgainstMaxResponseBytes() {
    // 100 empty starts per event, each at a new index: 200 000 calls, none with a byte of text
    assertRefusedOnceTheBoundIsPassed(stream(e -> {
      StringBuilder calls = new StringBuilder("{\"tool_calls\":[");
      for (int i = 0; i < 100; i++) {
        calls.append(i == 0 ? "" : ",").append("{\"index\":").append(e * 100 + i).append('}');
      }
      return chat(delta(0, calls.append("]}").toString()));
    }), r -> r.choice(0).toolCalls().size(), BOUND / 16);
  }

  @Test
  void choicesThatOnlyFinishCountAgainstMaxResponseBytes() {
    // 100 choices per event that carry nothing but a finish reason: 200 000 choices
    assertRefusedOnceTheBoundIsPassed(stream(e -> {
      StringBuilder choices = new StringBuilder();
      for (int i = 0; i < 100; i++) {
        choices.append(i == 0 ? "" : ",").append(finish(1 + e * 100 + i, "stop"));
      }
      return chat(choices.toString());
    }), r -> r.choices().size(), BOUND / 16);
  }

  @Test
  void theRawJsonOfCitationsCountsAgainstMaxResponseBytes() {
    // each citation names a one-letter URL and carries 10 KiB of other JSON: 20 MiB in all
    String padding = "x".repeat(10 * 1024);
    assertRefusedOnceTheBoundIsPassed(stream(e -> chat(delta(0, "{\"annotations\":[{\"type\":\"url_citation\","
            + "\"url_citation\":{\"url\":\"u\",\"pad\":\"" + padding + "\"}}]}"))),
        r -> r.choice(0).citations().stream().mapToLong(c -> c.raw().toString().length()).sum(), 2L * BOUND);
  }
}
