package io.breakwater.stream.llm;

import static io.breakwater.Breakwater.hedgedBy;
import static io.breakwater.stream.llm.LlmFixtures.*;
import static io.breakwater.stream.llm.ScriptedTransport.NEVER;
import static io.breakwater.stream.llm.ScriptedTransport.script;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.hedge.HedgePolicy;
import io.breakwater.internal.stream.llm.Attempt;
import io.breakwater.internal.stream.llm.Transport;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.StreamTimeouts;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.SocketException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * {@code LlmStreamClient.Builder.hedge}: first-token hedging built into the client, in virtual time on scripted
 * streams. A hedge races attempts until content is delivered, never after; a round whose attempts all failed is one
 * retry; only the winner's deltas reach the caller.
 */
class LlmStreamHedgingTest {

  static final Duration VERIFY = Duration.ofSeconds(10);
  static final Map<String, Object> REQUEST = Map.of("model", "m", "messages", List.of());
  static final String ANSWER = "Take the TGV.";

  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final List<LlmCallEvent> events = new CopyOnWriteArrayList<>();

  /** Hedge after {@code hedgeDelay} of no content; first-token budget 4 s; retries after 500 ms. */
  LlmStreamClient.Builder builder(Dialect dialect, Transport transport, Duration hedgeDelay, Duration idle) {
    return LlmStreamClient.builder("http://127.0.0.1:9", dialect).transport(transport)
        .timeouts(StreamTimeouts.builder().firstItem(Duration.ofSeconds(4)).idle(idle).build())
        .retry(RetryPolicy.builder().name("llm-test").maxRetries(2).backoff(Backoff.fixed(Duration.ofMillis(500)))
            .timeoutBase(Duration.ZERO).budget(RetryBudget.unlimited()).meterRegistry(meters).build())
        .hedge(HedgePolicy.builder().name("first-token").delay(hedgeDelay).budget(1.0).meterRegistry(meters).build())
        .meterRegistry(meters);
  }

  /** Anthropic; hedge after 1 s of no content, idle budget 1 s. */
  LlmStreamClient client(Transport transport) {
    return builder(Dialect.ANTHROPIC_MESSAGES, transport, Duration.ofSeconds(1), Duration.ofSeconds(1))
        .callListener(events::add).build();
  }

  double count(String name) {
    return meters.find(name).counters().stream().mapToDouble(Counter::count).sum();
  }

  /** Anthropic framing, then the server thinks forever. */
  static final Object[] FRAMING_THEN_STALL = script(messageStart("msg_slow", 25),
      blockStart(0, "{\"type\":\"text\",\"text\":\"\"}"), PING, NEVER);

  @Test
  void aCallWithNoContentByTheHedgeDelayGetsABackupAndTheFirstContentWins() {
    ScriptedTransport transport = ScriptedTransport.of(FRAMING_THEN_STALL, script(ANTHROPIC_TEXT.body()));
    LlmStreamClient client = client(transport);
    List<LlmDelta> deltas = new CopyOnWriteArrayList<>();

    StepVerifier.withVirtualTime(() -> client.stream(REQUEST).doOnNext(deltas::add).as(LlmResponse::aggregate))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(1))
        .assertNext(r -> {
          assertThat(r.text()).isEqualTo(ANSWER);
          assertThat(r.id()).as("the winner's message, not the stalled one's").isEqualTo("msg_bw1");
          assertThat(r.attempts()).isEqualTo(2);
        })
        .verifyComplete();

    assertThat(transport.attempts).extracting(Attempt::number).containsExactly(1, 2);
    assertThat(transport.cancelled).as("the stalled attempt was cancelled").containsExactly(1);
    assertThat(deltas).filteredOn(LlmDelta.Metadata.class::isInstance)
        .as("the loser's framing never reaches the caller")
        .containsExactly(new LlmDelta.Metadata("msg_bw1", "claude-bw"));
    assertThat(deltas.get(deltas.size() - 1)).isEqualTo(new LlmDelta.Done(2));
    assertThat(count("breakwater.stream.retries")).as("a hedge is not a retry").isZero();
    assertThat(count("breakwater.hedge.started")).isEqualTo(1);
    assertThat(count("breakwater.hedge.won")).isEqualTo(1);
    assertThat(count("breakwater.hedge.cancelled")).isEqualTo(1);
    assertThat(events).singleElement().satisfies(e -> {
      assertThat(e.outcome()).isEqualTo(LlmCallEvent.Outcome.COMPLETED);
      assertThat(e.attempts()).isEqualTo(2);
      assertThat(e.timeToFirstContent()).isEqualTo(Duration.ofSeconds(1));
    });
  }

  @Test
  void afterTheFirstContentAStreamIsNeverHedgedHoweverLongItPauses() {
    // content at once, then pauses of 900 ms (under the 1 s idle budget) for 2.7 s, well past the hedge delay
    ScriptedTransport transport = ScriptedTransport.always(messageStart("msg_bw1", 25),
        blockStart(0, "{\"type\":\"text\",\"text\":\"\"}"), textDelta(0, "Take"), Duration.ofMillis(900),
        textDelta(0, " the"), Duration.ofMillis(900), textDelta(0, " TGV."), Duration.ofMillis(900), blockStop(0),
        messageDelta("end_turn", "{\"output_tokens\":6}"), MESSAGE_STOP);
    LlmStreamClient client = client(transport);

    StepVerifier.withVirtualTime(() -> client.stream(REQUEST).as(LlmResponse::aggregate))
        .thenAwait(Duration.ofSeconds(3))
        .assertNext(r -> assertThat(r.text()).isEqualTo(ANSWER))
        .verifyComplete();

    assertThat(transport.attempts).hasSize(1);
    assertThat(count("breakwater.hedge.started")).isZero();
  }

  @Test
  void aRoundWhoseAttemptsAllFailedIsRetriedOnceNotOncePerHedge() {
    ScriptedTransport transport = ScriptedTransport.of(
        script(messageStart("msg_1", 5), Duration.ofMillis(1500), OVERLOADED),   // fails at 1.5 s
        script(messageStart("msg_2", 5), Duration.ofSeconds(1), OVERLOADED),     // hedge at 1 s, fails at 2 s
        script(ANTHROPIC_TEXT.body()));                                           // the retry, at 2.5 s
    LlmStreamClient client = client(transport);

    StepVerifier.withVirtualTime(() -> client.stream(REQUEST).as(LlmResponse::aggregate))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(2500))
        .assertNext(r -> {
          assertThat(r.text()).isEqualTo(ANSWER);
          assertThat(r.attempts()).isEqualTo(3);
        })
        .verifyComplete();

    assertThat(transport.attempts).extracting(Attempt::number).containsExactly(1, 2, 3);
    assertThat(count("breakwater.stream.retries")).isEqualTo(1);
    assertThat(count("breakwater.hedge.started")).as("the retry answered before its hedge delay").isEqualTo(1);
  }

  @Test
  void aResumeContinuesTheAnswerAndIsNeverRaced() {
    ScriptedTransport transport = ScriptedTransport.of(
        script("id: 41\n" + text("a") + "id: 42\n" + text("b"), new SocketException("reset")),
        script(Duration.ofSeconds(2), "id: 43\n" + text("c") + CHAT_DONE));   // the resume is slow to answer
    LlmStreamClient client =
        builder(Dialect.OPENAI_CHAT, transport, Duration.ofMillis(500), Duration.ofSeconds(3)).build();

    StepVerifier.withVirtualTime(() -> client.stream(REQUEST).as(LlmResponse::aggregate))
        .thenAwait(Duration.ofSeconds(3))
        .assertNext(r -> assertThat(r.text()).isEqualTo("abc"))
        .verifyComplete();

    assertThat(transport.attempts).extracting(Attempt::lastEventId).containsExactly(null, "42");
    assertThat(count("breakwater.stream.resumes")).isEqualTo(1);
    assertThat(count("breakwater.hedge.started")).isZero();
  }

  @Test
  void aHedgedByAroundAHedgingClientDoesNotMultiplyTheAttempts() {
    // two calls, one per attempt of the outer hedge: the first stalls, the second answers
    AtomicInteger opened = new AtomicInteger();
    Transport transport = attempt -> ScriptedTransport.body(
        opened.incrementAndGet() == 1 ? FRAMING_THEN_STALL : script(ANTHROPIC_TEXT.body()));
    LlmStreamClient client = client(transport);
    HedgePolicy outer = HedgePolicy.builder().name("outer").delay(Duration.ofMillis(1500)).budget(1.0)
        .meterRegistry(meters).build();

    StepVerifier.withVirtualTime(() -> client.stream(REQUEST)
            .transformDeferred(hedgedBy(outer, LlmDelta::isContent))
            .as(LlmResponse::aggregate))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(1500))
        .assertNext(r -> assertThat(r.text()).isEqualTo(ANSWER))
        .verifyComplete();

    // the client's own hedge (due at 1 s) stood down inside the outer hedge's attempt, which hedged at 1.5 s
    assertThat(opened).hasValue(2);
    assertThat(meters.get("breakwater.hedge.started").tag("dependency", "first-token").counter().count()).isZero();
    assertThat(meters.get("breakwater.hedge.started").tag("dependency", "outer").counter().count()).isEqualTo(1);
  }
}
