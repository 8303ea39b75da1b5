package io.breakwater.stream.llm;

import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.stream.llm.LlmFixtures.*;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerOpenException;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The assembled response as a value, and the client composed with the library's other operators. */
class LlmResponseTest {

  static final Map<String, Object> REQUEST = Map.of("model", "m", "messages", List.of());
  static final Duration VERIFY = Duration.ofSeconds(10);

  static LlmStreamClient.Builder client(Dialect dialect, ScriptedTransport transport) {
    return LlmStreamClient.builder("http://127.0.0.1:9", dialect).transport(transport)
        .meterRegistry(new SimpleMeterRegistry())
        .retry(RetryPolicy.builder().name("response-test").maxRetries(0).budget(RetryBudget.unlimited()).build());
  }

  @Test
  void aResponseSurvivesAJacksonRoundTrip() throws Exception {
    for (LlmFixtures.Fixture fixture : List.of(ANTHROPIC_WEB_SEARCH, CHAT_TOOLS, ANTHROPIC_THINKING, CHAT_N2)) {
      LlmResponse response = LlmDialectsTest.assemble(fixture.dialect(), fixture.body());
      ObjectMapper mapper = new ObjectMapper();
      LlmResponse read = mapper.readValue(mapper.writeValueAsString(response), LlmResponse.class);
      assertThat(read).as(fixture.name()).isEqualTo(response);
    }
  }

  @Test
  void aggregatingAnythingButTheClientsStreamGivesZeroAttemptsAndNoCompletion() {
    StepVerifier.create(LlmResponse.aggregate(Flux.just(new LlmDelta.Text(0, "a"), new LlmDelta.Text(2, "c"))))
        .assertNext(r -> {
          assertThat(r.attempts()).isZero();
          assertThat(r.completed()).isFalse();
          assertThat(r.choices()).extracting(LlmChoice::index).containsExactly(0, 2);
          assertThat(r.choice(1)).isEqualTo(LlmChoice.empty(1));
        })
        .verifyComplete();
    StepVerifier.create(LlmResponse.aggregate(Flux.empty()))
        .assertNext(r -> assertThat(r.choices()).containsExactly(LlmChoice.empty(0)))
        .verifyComplete();
  }

  @Test
  void argumentsThatAreNotJsonKeepTheirTextAndParseToNull() {
    StepVerifier.create(LlmResponse.aggregate(Flux.just(new LlmDelta.ToolCallStart(0, 0, "c1", "f", false),
            new LlmDelta.ToolCallArguments(0, 0, "{\"a\": 1, \"b\""))))
        .assertNext(r -> {
          ToolCall call = r.toolCalls().get(0);
          assertThat(call.arguments()).isNull();
          assertThat(call.argumentsJson()).isEqualTo("{\"a\": 1, \"b\"");
        })
        .verifyComplete();
  }

  @Test
  void anAnswerKeptByIdempotentByIsAskedForOnce() {
    ScriptedTransport transport = ScriptedTransport.always(CHAT_TOOLS.body());
    LlmStreamClient client = client(Dialect.OPENAI_CHAT, transport).build();
    IdempotencyStore store = IdempotencyStore.inMemory();
    IdempotencyKey key = IdempotencyKey.explicit("planner", "step-7", REQUEST);
    Mono<LlmResponse> step = client.stream(REQUEST).as(LlmResponse::aggregate)
        .transformDeferred(idempotentBy(key, store, LlmResponse.class));
    LlmResponse first = step.block(VERIFY);
    LlmResponse second = step.block(VERIFY);
    assertThat(second).isEqualTo(first);
    assertThat(second.toolCalls()).extracting(ToolCall::name).containsExactly("find_trains", "weather");
    assertThat(transport.attempts).hasSize(1);
  }

  @Test
  void aBreakerGuardsEveryAttemptAndRejectsWithoutARequestOnceOpen() {
    ScriptedTransport transport = ScriptedTransport.always(new HttpStatusException(503));
    CircuitBreaker breaker = CircuitBreaker.builder("llm").minimumCalls(2).meterRegistry(new SimpleMeterRegistry())
        .build();
    LlmStreamClient client = client(Dialect.OPENAI_CHAT, transport).breaker(breaker).build();
    for (int i = 0; i < 2; i++) {
      StepVerifier.create(client.stream(REQUEST)).expectError().verify(VERIFY);
    }
    StepVerifier.create(client.stream(REQUEST))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(CircuitBreakerOpenException.class))
        .verify(VERIFY);
    assertThat(transport.attempts).hasSize(2);
  }
}
