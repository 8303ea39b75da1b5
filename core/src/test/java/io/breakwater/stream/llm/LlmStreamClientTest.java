package io.breakwater.stream.llm;

import static io.breakwater.Breakwater.withDeadline;
import static io.breakwater.stream.llm.LlmFixtures.*;
import static io.breakwater.stream.llm.ScriptedTransport.NEVER;
import static io.breakwater.stream.llm.ScriptedTransport.script;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.internal.stream.llm.Attempt;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.retry.RetryStopReason;
import io.breakwater.stream.EventTooLargeException;
import io.breakwater.stream.FirstItemTimeoutException;
import io.breakwater.stream.IdleTimeoutException;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.StreamTruncatedByTimeoutException;
import io.breakwater.stream.StreamTruncatedException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.SocketException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The client's behaviour in virtual time, on scripted streams: what counts as progress, how the first-token budget
 * bounds a call across retries, what is retried, resumed or final, and what the caller receives.
 */
class LlmStreamClientTest {

  static final Duration VERIFY = Duration.ofSeconds(10);
  static final Map<String, Object> REQUEST = Map.of("model", "m", "messages", List.of());
  static final StreamTimeouts FOUR_AND_ONE = StreamTimeouts.builder()
      .firstItem(Duration.ofSeconds(4)).idle(Duration.ofSeconds(1)).build();
  static final ObjectMapper JSON = new ObjectMapper();

  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final List<LlmCallEvent> events = new CopyOnWriteArrayList<>();

  LlmStreamClient.Builder client(Dialect dialect, ScriptedTransport transport) {
    return LlmStreamClient.builder("http://127.0.0.1:9", dialect).transport(transport)
        .timeouts(FOUR_AND_ONE)
        .retry(RetryPolicy.builder().name("llm-test").maxRetries(2).backoff(Backoff.fixed(Duration.ofMillis(500)))
            .timeoutBase(Duration.ZERO).budget(RetryBudget.unlimited()).meterRegistry(meters).build())
        .meterRegistry(meters)
        .callListener(events::add);
  }

  double count(String name) {
    return meters.find(name).counters().stream().mapToDouble(Counter::count).sum();
  }

  // ---- progress: content, not events ----

  @Test
  void aTwoSecondThinkWithAFourSecondFirstTokenBudgetAndAOneSecondIdleBudgetAnswersWithOneRequest() {
    ScriptedTransport transport = ScriptedTransport.always(CHAT_ROLE, Duration.ofSeconds(2), text("Lyon"),
        Duration.ofMillis(900), text(" is lovely."), chat(finish(0, "stop")), CHAT_DONE);
    LlmStreamClient client = client(Dialect.OPENAI_CHAT, transport).build();
    StepVerifier.withVirtualTime(() -> client.stream(REQUEST).as(LlmResponse::aggregate))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(3))
        .assertNext(r -> {
          assertThat(r.text()).isEqualTo("Lyon is lovely.");
          assertThat(r.attempts()).isEqualTo(1);
        })
        .verifyComplete();
    assertThat(transport.attempts).hasSize(1);
    assertThat(events).singleElement().satisfies(e -> {
      assertThat(e.outcome()).isEqualTo(LlmCallEvent.Outcome.COMPLETED);
      assertThat(e.attempts()).isEqualTo(1);
      assertThat(e.timeToFirstContent()).isEqualTo(Duration.ofSeconds(2));
    });
  }

  @Test
  void aStallBeforeTheFirstTokenTripsTheFirstTokenBudgetNotTheIdleOne() {
    ScriptedTransport transport = ScriptedTransport.always(messageStart("msg_1", 5),
        blockStart(0, "{\"type\":\"text\",\"text\":\"\"}"), PING, Duration.ofSeconds(1), PING,
        Duration.ofSeconds(1), PING, Duration.ofSeconds(1), PING, NEVER);
    LlmStreamClient client = client(Dialect.ANTHROPIC_MESSAGES, transport).build();
    StepVerifier.withVirtualTime(() -> client.stream(REQUEST))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(3999))
        .thenAwait(Duration.ofMillis(1))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(FirstItemTimeoutException.class);
          assertThat(((FirstItemTimeoutException) e).timeout()).isEqualTo(Duration.ofSeconds(4));
        })
        .verify(VERIFY);
    assertThat(transport.attempts).as("the first-token budget is spent: no retry").hasSize(1);
    assertThat(transport.cancelled).containsExactly(1);
  }

  @Test
  void framingSentForeverIsNoProgress() {
    Object[] roleForever = new Object[80];
    for (int i = 0; i < roleForever.length; i += 2) {
      roleForever[i] = CHAT_ROLE;
      roleForever[i + 1] = Duration.ofMillis(200);
    }
    LlmStreamClient client = client(Dialect.OPENAI_CHAT, ScriptedTransport.always(roleForever)).build();
    StepVerifier.withVirtualTime(() -> client.stream(REQUEST))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(3999))
        .thenAwait(Duration.ofMillis(1))
        .expectError(FirstItemTimeoutException.class)
        .verify(VERIFY);
  }

  @Test
  void theFirstTokenBudgetBoundsTheWholeCallAcrossRetries() {
    ScriptedTransport transport = ScriptedTransport.of(
        script(CHAT_ROLE, Duration.ofSeconds(3), new HttpStatusException(503)),
        script(CHAT_ROLE, NEVER));
    LlmStreamClient client = client(Dialect.OPENAI_CHAT, transport).build();
    StepVerifier.withVirtualTime(() -> client.stream(REQUEST))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(3999))
        .thenAwait(Duration.ofMillis(1))
        .expectError(FirstItemTimeoutException.class)
        .verify(VERIFY);
    assertThat(transport.attempts).hasSize(2);
    assertThat(events).singleElement().satisfies(e -> {
      assertThat(e.outcome()).isEqualTo(LlmCallEvent.Outcome.FAILED);
      assertThat(e.attempts()).isEqualTo(2);
      assertThat(e.failureKind()).isEqualTo(FailureKind.TIMEOUT);
      assertThat(e.duration()).isEqualTo(Duration.ofSeconds(4));
    });
  }

  @Test
  void eachAttemptSendsTheTimeItHasLeft() {
    assertRemainingPerAttempt(client -> client.stream(REQUEST).transformDeferred(withDeadline(Duration.ofSeconds(60))),
        Duration.ofMinutes(10), Duration.ofSeconds(60), Duration.ofMillis(56_500));
  }

  @Test
  void withoutADeadlineEachAttemptHasTheRestOfTheMaximumDuration() {
    assertRemainingPerAttempt(client -> client.stream(REQUEST),
        Duration.ofMinutes(2), Duration.ofMinutes(2), Duration.ofMillis(116_500));
  }

  /** A first attempt that fails after 3 s, a retry 500 ms later: what each was told it had left. */
  private void assertRemainingPerAttempt(java.util.function.Function<LlmStreamClient, Flux<LlmDelta>> call,
      Duration maxDuration, Duration first, Duration second) {
    ScriptedTransport transport = ScriptedTransport.of(
        script(Duration.ofSeconds(3), new HttpStatusException(503)),
        script(CHAT_TEXT.body()));
    LlmStreamClient client = client(Dialect.OPENAI_CHAT, transport).maxDuration(maxDuration).build();
    StepVerifier.withVirtualTime(() -> call.apply(client))
        .thenAwait(Duration.ofSeconds(4))
        .expectNextCount(7)   // metadata, three texts, finish, usage, done
        .verifyComplete();
    assertThat(transport.remaining).containsExactly(first, second);
  }

  // ---- retries before content ----

  @Test
  void aFailedAttemptsFramingIsNeverDeliveredAndTheAttemptsAreReported() {
    ScriptedTransport transport = ScriptedTransport.of(
        script(messageStart("msg_lost", 25), blockStart(0, "{\"type\":\"text\",\"text\":\"\"}"), PING,
            new SocketException("Connection reset")),
        script(ANTHROPIC_TEXT.body()));
    LlmStreamClient client = client(Dialect.ANTHROPIC_MESSAGES, transport).build();
    List<LlmDelta> deltas = new CopyOnWriteArrayList<>();
    StepVerifier.withVirtualTime(() -> client.stream(REQUEST).doOnNext(deltas::add).as(LlmResponse::aggregate))
        .thenAwait(Duration.ofSeconds(1))
        .assertNext(r -> {
          assertThat(r.id()).isEqualTo("msg_bw1");
          assertThat(r.text()).isEqualTo("Take the TGV.");
          assertThat(r.attempts()).isEqualTo(2);
        })
        .verifyComplete();
    assertThat(deltas).filteredOn(LlmDelta.Metadata.class::isInstance)
        .containsExactly(new LlmDelta.Metadata("msg_bw1", "claude-bw"));
    assertThat(deltas.get(deltas.size() - 1)).isEqualTo(new LlmDelta.Done(2));
    assertThat(count("breakwater.stream.retries")).isEqualTo(1);
    assertThat(meters.get("breakwater.stream.retries").tag("kind", "connection").counter().count()).isEqualTo(1);
    assertThat(events).singleElement().satisfies(e -> {
      assertThat(e.attempts()).isEqualTo(2);
      assertThat(e.resumes()).isZero();
      assertThat(e.usage()).isEqualTo(new TokenUsage(25, 6, 31, 3, 0));
    });
  }

  @Test
  void aServerErrorEventIsTheSameExceptionBeforeAndAfterTheFirstToken() {
    LlmStreamClient before = client(Dialect.ANTHROPIC_MESSAGES,
        ScriptedTransport.always(messageStart("msg_1", 5), OVERLOADED)).build();
    StepVerifier.withVirtualTime(() -> before.stream(REQUEST))
        .thenAwait(Duration.ofSeconds(2))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(LlmStreamException.class);
          LlmStreamException error = (LlmStreamException) e;
          assertThat(error.errorType()).isEqualTo("overloaded_error");
          assertThat(error.failureKind()).isEqualTo(FailureKind.SERVER_ERROR);
          assertThat(error.partialResponse().text()).isEmpty();
          assertThat(error.partialResponse().attempts()).isEqualTo(3);
          assertThat(error).hasCauseInstanceOf(RetryExhaustedException.class);   // an outer retry stops here
          assertThat(((RetryExhaustedException) error.getCause()).attempts()).hasSize(3);
        })
        .verify(VERIFY);

    ScriptedTransport after = ScriptedTransport.always(messageStart("msg_1", 5),
        blockStart(0, "{\"type\":\"text\",\"text\":\"\"}"), textDelta(0, "Hel"), OVERLOADED);
    LlmStreamClient afterClient = client(Dialect.ANTHROPIC_MESSAGES, after).build();
    StepVerifier.withVirtualTime(() -> afterClient.stream(REQUEST)
            .onErrorResume(LlmStreamException.class, e -> Flux.just(new LlmDelta.Text(0, "|caught"))))
        .expectNext(new LlmDelta.Metadata("msg_1", "claude-bw"))
        .expectNextMatches(d -> d instanceof LlmDelta.Usage)
        .expectNext(new LlmDelta.Text(0, "Hel"), new LlmDelta.Text(0, "|caught"))
        .verifyComplete();
    assertThat(after.attempts).as("a failed generation is never resumed").hasSize(1);
  }

  // ---- after content ----

  @Test
  void aStallAfterTheFirstTokenIsCaughtAsATimeoutException() {
    LlmStreamClient client = client(Dialect.OPENAI_CHAT,
        ScriptedTransport.always(CHAT_ROLE, text("Lyon"), NEVER)).build();
    List<Throwable> caught = new CopyOnWriteArrayList<>();
    StepVerifier.withVirtualTime(() -> client.stream(REQUEST)
            .onErrorResume(TimeoutException.class, e -> {
              caught.add(e);
              return Flux.empty();
            }))
        .expectNextMatches(d -> d instanceof LlmDelta.Metadata)
        .expectNext(new LlmDelta.Text(0, "Lyon"))
        .expectNoEvent(Duration.ofSeconds(1))
        .thenAwait(Duration.ofMillis(250))
        .verifyComplete();
    assertThat(caught).singleElement().satisfies(e -> {
      assertThat(e).isInstanceOf(StreamTruncatedByTimeoutException.class).hasCauseInstanceOf(IdleTimeoutException.class);
      assertThat(((StreamTruncatedByTimeoutException) e).failureKind()).isEqualTo(FailureKind.TIMEOUT);
      assertThat(LlmResponse.partialOf(e).orElseThrow().text()).isEqualTo("Lyon");
    });
  }

  @Test
  void aLengthFinishIsAnIncompleteResponseNotASuccess() {
    LlmStreamClient client = client(Dialect.OPENAI_CHAT, ScriptedTransport.always(CHAT_LENGTH.body())).build();
    StepVerifier.withVirtualTime(() -> client.stream(REQUEST))
        .expectNextMatches(d -> d instanceof LlmDelta.Metadata)
        .expectNext(new LlmDelta.Text(0, "{\""), new LlmDelta.Finish(0, FinishReason.LENGTH, "length"))
        .expectNextMatches(d -> d instanceof LlmDelta.Usage)
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(LlmIncompleteException.class).hasMessageContaining("LENGTH");
          LlmResponse response = ((LlmIncompleteException) e).response();
          assertThat(response.completed()).isTrue();
          assertThat(response.text()).isEqualTo("{\"");
          assertThat(((LlmIncompleteException) e).failureKind()).isEqualTo(FailureKind.BUSINESS);
        })
        .verify(VERIFY);
    assertThat(events).singleElement()
        .satisfies(e -> assertThat(e.outcome()).isEqualTo(LlmCallEvent.Outcome.INCOMPLETE));
    StepVerifier.withVirtualTime(() -> client(Dialect.OPENAI_RESPONSES,
            ScriptedTransport.always(RESPONSES_INCOMPLETE.body())).build().stream(REQUEST).as(LlmResponse::aggregate))
        .expectError(LlmIncompleteException.class)
        .verify(VERIFY);
  }

  @Test
  void aResponsesStreamIsResumedOnlyWhenItIsABackgroundResponse() {
    String foreground = responsesText("resp_fg", false, "Pack", " an", " umbrella.");
    String cut = foreground.substring(0, foreground.indexOf("response.output_text.done") - 7);
    ScriptedTransport transport = ScriptedTransport.always(cut, new SocketException("Connection reset"));
    StepVerifier.withVirtualTime(() -> client(Dialect.OPENAI_RESPONSES, transport).build().stream(REQUEST))
        .expectNextCount(4)
        .thenAwait(Duration.ofSeconds(1))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(StreamTruncatedException.class).hasCauseInstanceOf(SocketException.class);
          assertThat(LlmResponse.partialOf(e).orElseThrow().text()).isEqualTo("Pack an umbrella.");
          assertThat(((StreamTruncatedException) e).itemsDelivered()).as("the three text deltas").isEqualTo(3);
        })
        .verify(VERIFY);
    assertThat(transport.attempts).as("no GET for a response created with background: false").hasSize(1);

    ScriptedTransport resumable = cutAfterFirstDeltaThenReplayedFromSequenceOne();
    List<LlmDelta> deltas = new CopyOnWriteArrayList<>();
    StepVerifier.withVirtualTime(() -> client(Dialect.OPENAI_RESPONSES, resumable).build().stream(REQUEST)
            .doOnNext(deltas::add).as(LlmResponse::aggregate))
        .thenAwait(Duration.ofSeconds(1))
        .assertNext(r -> {
          assertThat(r.text()).isEqualTo("Pack an umbrella.");
          assertThat(r.attempts()).isEqualTo(2);
        })
        .verifyComplete();
    assertThat(deltas).filteredOn(LlmDelta.Text.class::isInstance).hasSize(3);
    Attempt resume = resumable.attempts.get(1);
    assertThat(resume.responseId()).isEqualTo("resp_bg");
    assertThat(resume.startingAfter()).isEqualTo(5);
    assertThat(count("breakwater.stream.resumes")).isEqualTo(1);
    assertThat(events).last().satisfies(e -> assertThat(e.resumes()).isEqualTo(1));
  }

  /** A background response cut after its first text delta (sequence 5), whose resume replays from sequence 1. */
  private static ScriptedTransport cutAfterFirstDeltaThenReplayedFromSequenceOne() {
    String background = responsesText("resp_bg", true, "Pack", " an", " umbrella.");
    String upToSecondDelta = background.substring(0, background.indexOf("\"sequence_number\":6"));
    upToSecondDelta = upToSecondDelta.substring(0, upToSecondDelta.lastIndexOf("event:"));
    return ScriptedTransport.of(
        script(upToSecondDelta, new SocketException("Connection reset")),
        script(background.substring(background.indexOf("event: response.in_progress"))));
  }

  @Test
  void aResumedResponsesStreamDeliversEachRawEventOnce() {
    ScriptedTransport resumable = cutAfterFirstDeltaThenReplayedFromSequenceOne();
    List<LlmDelta> deltas = new CopyOnWriteArrayList<>();
    StepVerifier.withVirtualTime(() -> client(Dialect.OPENAI_RESPONSES, resumable).rawEvents(true).build()
            .stream(REQUEST).doOnNext(deltas::add).as(LlmResponse::aggregate))
        .thenAwait(Duration.ofSeconds(1))
        .assertNext(r -> assertThat(r.text()).isEqualTo("Pack an umbrella."))
        .verifyComplete();
    List<Long> sequence = deltas.stream().filter(LlmDelta.Event.class::isInstance)
        .map(d -> ((LlmDelta.Event) d).json().path("sequence_number").asLong()).toList();
    assertThat(sequence).as("raw events' sequence numbers across the resume").isNotEmpty()
        .doesNotHaveDuplicates().isSorted();
    assertThat(sequence.get(sequence.size() - 1)).isEqualTo(sequence.size() - 1);
  }

  @Test
  void lastEventIdIsSentBackOnlyWhenPrintableAndAtMost256Characters() {
    for (String id : List.of("a\u0007b", "x".repeat(257), "line\nbreak")) {
      ScriptedTransport transport = ScriptedTransport.always("id: " + id.replace("\n", "") + "\n"
          + text("t").substring(0), new SocketException("reset"));
      if (id.contains("\n")) {
        transport = ScriptedTransport.always("id: a\u001bb\n" + text("t"), new SocketException("reset"));
      }
      ScriptedTransport t = transport;
      StepVerifier.withVirtualTime(() -> client(Dialect.OPENAI_CHAT, t).build().stream(REQUEST))
          .expectNextCount(2)
          .thenAwait(Duration.ofSeconds(1))
          .expectError(StreamTruncatedException.class)
          .verify(VERIFY);
      assertThat(t.attempts).as("id %s", id.length()).hasSize(1);
    }
    ScriptedTransport printable = ScriptedTransport.of(
        script("id: 41\n" + text("a") + "id: 42\n" + text("b"), new SocketException("reset")),
        script("id: 42\n" + text("b") + "id: 43\n" + text("c") + CHAT_DONE));
    StepVerifier.withVirtualTime(() -> client(Dialect.OPENAI_CHAT, printable).build().stream(REQUEST)
            .as(LlmResponse::aggregate))
        .thenAwait(Duration.ofSeconds(1))
        .assertNext(r -> assertThat(r.text()).isEqualTo("abc"))
        .verifyComplete();
    assertThat(printable.attempts).extracting(Attempt::lastEventId).containsExactly(null, "42");
  }

  @Test
  void aResumeFromATextualEventIdDropsTheEventsCarryingThatIdAndKeepsTheRest() {
    // an event without an id line carries the last id seen (SSE's last event ID): "c" is dropped with "b", "e" is kept
    // with "d"
    ScriptedTransport transport = ScriptedTransport.of(
        script("id: evt-a\n" + text("a") + "id: evt-b\n" + text("b"), new SocketException("reset")),
        script("id: evt-b\n" + text("b") + text("c") + "id: evt-c\n" + text("d") + text("e") + CHAT_DONE));
    StepVerifier.withVirtualTime(() -> client(Dialect.OPENAI_CHAT, transport).build().stream(REQUEST)
            .as(LlmResponse::aggregate))
        .thenAwait(Duration.ofSeconds(1))
        .assertNext(r -> assertThat(r.text()).isEqualTo("abde"))
        .verifyComplete();
    assertThat(transport.attempts).extracting(Attempt::lastEventId).containsExactly(null, "evt-b");
  }

  @Test
  void aResumeFromANumericEventIdBeyondALongDropsTheReplayedEventsByNumber() {
    // 2^64 - 1, 2^64, 2^64 + 1: the server replays from before the resume point, as a numeric id allows
    ScriptedTransport transport = ScriptedTransport.of(
        script("id: 18446744073709551615\n" + text("a") + "id: 18446744073709551616\n" + text("b"),
            new SocketException("reset")),
        script("id: 18446744073709551615\n" + text("a") + "id: 18446744073709551616\n" + text("b")
            + "id: 18446744073709551617\n" + text("c") + CHAT_DONE));
    StepVerifier.withVirtualTime(() -> client(Dialect.OPENAI_CHAT, transport).build().stream(REQUEST)
            .as(LlmResponse::aggregate))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(1))
        .assertNext(r -> assertThat(r.text()).isEqualTo("abc"))
        .verifyComplete();
  }

  @Test
  void aSignedEventIdAfterANumericResumeIsComparedAsTextSoItIsKept() {
    ScriptedTransport transport = ScriptedTransport.of(
        script("id: 5\n" + text("a") + "id: 6\n" + text("b"), new SocketException("reset")),
        script("id: 6\n" + text("b") + "id: -7\n" + text("c") + "id: +1\n" + text("d") + CHAT_DONE));
    StepVerifier.withVirtualTime(() -> client(Dialect.OPENAI_CHAT, transport).build().stream(REQUEST)
            .as(LlmResponse::aggregate))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(1))
        .assertNext(r -> assertThat(r.text()).isEqualTo("abcd"))
        .verifyComplete();
  }

  @Test
  void framingIsNeitherAFirstTokenNorProgress() {
    ScriptedTransport framing = ScriptedTransport.always(CHAT_ROLE, Duration.ofMillis(300), CHAT_ROLE,
        Duration.ofMillis(300), CHAT_ROLE, Duration.ofMillis(300), CHAT_ROLE, ScriptedTransport.NEVER);
    StepVerifier.withVirtualTime(() -> client(Dialect.OPENAI_CHAT, framing)
            .timeouts(StreamTimeouts.builder().firstItem(Duration.ofSeconds(1)).idle(Duration.ofSeconds(10)).build())
            .build().stream(REQUEST))
        .thenAwait(Duration.ofMillis(999))
        .expectNoEvent(Duration.ofNanos(1))
        .thenAwait(Duration.ofSeconds(1))
        .expectError(FirstItemTimeoutException.class)
        .verify(VERIFY);
  }

  @Test
  void aResponseOfExactlyMaxResponseBytesIsDelivered() {
    LlmStreamClient client = client(Dialect.OPENAI_CHAT,
        ScriptedTransport.always(CHAT_ROLE, text("0123456789"), text("\u00e9"), CHAT_DONE))
        .maxResponseBytes(12).build();
    StepVerifier.withVirtualTime(() -> client.stream(REQUEST).as(LlmResponse::aggregate))
        .assertNext(r -> assertThat(r.text()).isEqualTo("0123456789\u00e9"))
        .verifyComplete();
  }

  @Test
  void theOutputIsBoundedByMaxResponseBytes() {
    LlmStreamClient client = client(Dialect.OPENAI_CHAT,
        ScriptedTransport.always(CHAT_ROLE, text("0123456789"), text("é"), text("more"), CHAT_DONE))
        .maxResponseBytes(11).build();
    StepVerifier.withVirtualTime(() -> client.stream(REQUEST))
        .expectNextCount(2)
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(StreamTruncatedException.class).hasCauseInstanceOf(EventTooLargeException.class);
          assertThat(e.getCause()).hasMessageContaining("maxResponseBytes");
          assertThat(((StreamTruncatedException) e).failureKind()).isEqualTo(FailureKind.INVALID_ARGUMENT);
          assertThat(LlmResponse.partialOf(e).orElseThrow().text()).isEqualTo("0123456789é");
          assertThat(((StreamTruncatedException) e).itemsDelivered()).isEqualTo(2);
        })
        .verify(VERIFY);
  }

  @Test
  void theMaximumDurationBoundsAStreamThatNeverStopsSendingContent() {
    Object[] drip = new Object[40];
    for (int i = 0; i < drip.length; i += 2) {
      drip[i] = text("t");
      drip[i + 1] = Duration.ofMillis(500);
    }
    LlmStreamClient client = client(Dialect.OPENAI_CHAT, ScriptedTransport.always(drip))
        .maxDuration(Duration.ofSeconds(5)).build();
    StepVerifier.withVirtualTime(() -> client.stream(REQUEST).as(LlmResponse::aggregate))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(4999))
        .thenAwait(Duration.ofMillis(1))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(StreamTruncatedByTimeoutException.class).isInstanceOf(TimeoutException.class);
          assertThat(LlmResponse.partialOf(e).orElseThrow().text()).isEqualTo("tttttttttt");
        })
        .verify(VERIFY);
  }

  // ---- breakwater.stream.* count what happened (issue 26) ----

  @Test
  void aRetryTheDeadlineRefusesIsNotCountedAsARetry() {
    ScriptedTransport transport = ScriptedTransport.always(
        new HttpStatusException(429, Map.of("Retry-After", List.of("5"))));
    StepVerifier.withVirtualTime(() -> client(Dialect.OPENAI_CHAT, transport).build().stream(REQUEST)
            .transformDeferred(withDeadline(Duration.ofSeconds(2))))
        .expectErrorSatisfies(e -> assertThat(((RetryExhaustedException) e).reason())
            .isEqualTo(RetryStopReason.RETRY_AFTER_BEYOND_DEADLINE))
        .verify(VERIFY);
    assertThat(transport.attempts).hasSize(1);
    assertThat(count("breakwater.stream.retries")).isZero();
  }

  @Test
  void aResumeTheDeadlineRefusesIsCountedAsATruncationNotAResume() {
    ScriptedTransport transport = ScriptedTransport.always("id: 1\n" + text("a"), Duration.ofMillis(2950),
        new SocketException("reset"));
    StepVerifier.withVirtualTime(() -> client(Dialect.OPENAI_CHAT, transport)
            .timeouts(StreamTimeouts.builder().firstItem(Duration.ofSeconds(4)).idle(Duration.ofSeconds(10)).build())
            .build().stream(REQUEST)
            .transformDeferred(withDeadline(Duration.ofSeconds(3))))
        .expectNextCount(2)
        .thenAwait(Duration.ofSeconds(3))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(StreamTruncatedException.class).hasCauseInstanceOf(RetryExhaustedException.class);
          assertThat(((RetryExhaustedException) e.getCause()).reason()).isEqualTo(RetryStopReason.DEADLINE);
          assertThat(((StreamTruncatedException) e).failureKind()).isEqualTo(FailureKind.CONNECTION);
        })
        .verify(VERIFY);
    assertThat(transport.attempts).hasSize(1);
    assertThat(count("breakwater.stream.resumes")).isZero();
    assertThat(meters.get("breakwater.stream.truncations").tag("kind", "connection").counter().count()).isEqualTo(1);
  }

  // ---- requests, configuration, server text ----

  @Test
  void openAiChatRequestsAskForUsageUnlessTheyChoseOtherwise() throws IOException {
    ScriptedTransport transport = ScriptedTransport.always(CHAT_TEXT.body());
    LlmStreamClient client = client(Dialect.OPENAI_CHAT, transport).build();
    client.stream(REQUEST).blockLast(VERIFY);
    client.stream(Map.of("model", "m", "stream_options", Map.of("include_usage", false))).blockLast(VERIFY);
    client(Dialect.OPENAI_CHAT, transport).includeUsage(false).build().stream(REQUEST).blockLast(VERIFY);
    JsonNode asked = JSON.readTree(transport.attempts.get(0).body());
    assertThat(asked.path("stream").asBoolean()).isTrue();
    assertThat(asked.path("stream_options").path("include_usage").asBoolean()).isTrue();
    assertThat(JSON.readTree(transport.attempts.get(1).body()).path("stream_options").path("include_usage")
        .asBoolean()).isFalse();
    assertThat(JSON.readTree(transport.attempts.get(2).body()).has("stream_options")).isFalse();

    ScriptedTransport gemini = ScriptedTransport.always(GEMINI_TEXT.body());
    client(Dialect.GEMINI, gemini).path("/v1beta/models/g:streamGenerateContent?alt=sse").build()
        .stream(Map.of("contents", List.of())).blockLast(VERIFY);
    assertThat(JSON.readTree(gemini.attempts.get(0).body()).has("stream")).isFalse();
  }

  @Test
  void buildSaysWhatToChangeAndNeverQuotesCredentials() {
    assertThatThrownBy(() -> LlmStreamClient.builder("https://bob:s3cret@api.example.com", Dialect.OPENAI_CHAT)
        .build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("credentials")
        .hasMessageNotContaining("s3cret").hasMessageNotContaining("bob");
    assertThatThrownBy(() -> LlmStreamClient.builder("ftp://s3cret@host", Dialect.OPENAI_CHAT).build())
        .hasMessageContaining("http(s)").hasMessageNotContaining("s3cret");
    assertThatThrownBy(() -> LlmStreamClient.builder("http://host:8000/%zz s3cret", Dialect.OPENAI_CHAT).build())
        .hasMessageContaining("not a valid URL").hasMessageNotContaining("s3cret");
    assertThatThrownBy(() -> LlmStreamClient.builder("https://generativelanguage.googleapis.com", Dialect.GEMINI)
        .build()).hasMessageContaining(".path(");
    assertThatThrownBy(() -> LlmStreamClient.builder("http://h", Dialect.OPENAI_CHAT).maxEventBytes(8).build())
        .hasMessageContaining("at least 16");
    assertThatThrownBy(() -> LlmStreamClient.builder("http://h", Dialect.OPENAI_CHAT).maxResponseBytes(0).build())
        .hasMessageContaining("maxResponseBytes");
    assertThatThrownBy(() -> LlmStreamClient.builder("http://h", Dialect.OPENAI_CHAT)
        .maxDuration(Duration.ofSeconds(Long.MAX_VALUE)).build()).hasMessageContaining("at most 7 days");
    assertThatThrownBy(() -> LlmStreamClient.builder("http://h", Dialect.OPENAI_CHAT)
        .maxDuration(Duration.ofSeconds(-1)).build()).hasMessageContaining("positive");
    assertThatThrownBy(() -> LlmStreamClient.builder("http://h", Dialect.OPENAI_CHAT).build().stream(List.of(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("JSON object");
  }

  @Test
  void aServersErrorMessageIsEscapedAndCut() {
    String hostile = "line one\r\n2026-01-01 INFO forged entry " + "x".repeat(2_000_000);
    String event = "event: error\ndata: {\"error\":{\"type\":\"invalid_request_error\",\"message\":\""
        + hostile.replace("\r", "\\r").replace("\n", "\\n") + "\"}}\n\n";
    LlmStreamClient client = client(Dialect.OPENAI_CHAT, ScriptedTransport.always(event))
        .maxEventBytes(4 * 1024 * 1024).build();
    // virtual time: decoding the 2 MB event may take seconds on a loaded machine, which is no first-token stall
    StepVerifier.withVirtualTime(() -> client.stream(REQUEST))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(LlmStreamException.class);
          assertThat(e.getMessage()).doesNotContain("\r").doesNotContain("\n").contains("\\r\\n2026-01-01");
          assertThat(e.getMessage().length()).isLessThan(400);
        })
        .verify(VERIFY);
  }

  @Test
  void cancellingEndsTheCallAsCancelled() {
    ScriptedTransport transport = ScriptedTransport.always(CHAT_ROLE, text("a"), NEVER);
    StepVerifier.withVirtualTime(() -> client(Dialect.OPENAI_CHAT, transport).build().stream(REQUEST))
        .expectNextCount(2)
        .thenCancel()
        .verify(VERIFY);
    assertThat(transport.cancelled).containsExactly(1);
    assertThat(events).singleElement()
        .satisfies(e -> assertThat(e.outcome()).isEqualTo(LlmCallEvent.Outcome.CANCELLED));
    assertThat(count("breakwater.stream.truncations")).isZero();
  }

  @Test
  void aNonRetryableStatusIsTheCallersErrorAtOnce() {
    ScriptedTransport transport = ScriptedTransport.always(new HttpStatusException(400));
    StepVerifier.withVirtualTime(() -> client(Dialect.OPENAI_CHAT, transport).build().stream(REQUEST))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(HttpStatusException.class))
        .verify(VERIFY);
    assertThat(transport.attempts).hasSize(1);
  }

  @Test
  void aListenerThatThrowsDoesNotBreakTheCall() {
    LlmStreamClient client = client(Dialect.OPENAI_CHAT, ScriptedTransport.always(CHAT_TEXT.body()))
        .callListener(e -> {
          throw new IllegalStateException("listener bug");
        }).build();
    StepVerifier.withVirtualTime(() -> client.stream(REQUEST).as(LlmResponse::aggregate))
        .assertNext(r -> assertThat(r.text()).isEqualTo("Lyon is lovely in spring."))
        .verifyComplete();
  }

  @Test
  void rawEventsAreDeliveredOnlyWhenAskedAndAreNotContent() {
    LlmStreamClient client = client(Dialect.ANTHROPIC_MESSAGES, ScriptedTransport.always(ANTHROPIC_TEXT.body()))
        .rawEvents(true).build();
    List<LlmDelta> deltas = client.stream(REQUEST).collectList().block(VERIFY);
    assertThat(deltas).filteredOn(LlmDelta.Event.class::isInstance).extracting(d -> ((LlmDelta.Event) d).type())
        .containsExactly("message_start", "content_block_start", "content_block_delta", "content_block_delta",
            "content_block_stop", "message_delta");
    assertThat(deltas).filteredOn(LlmDelta.Event.class::isInstance).noneMatch(LlmDelta::isContent);
    assertThat(Mono.just(deltas).flatMap(d -> LlmResponse.aggregate(Flux.fromIterable(d))).block().text())
        .isEqualTo("Take the TGV.");
  }

  @Test
  void anOverloadBeforeContentIsRetried() {
    ScriptedTransport transport = ScriptedTransport.of(
        script(messageStart("msg_1", 5), blockStart(0, "{\"type\":\"text\",\"text\":\"\"}"), PING, OVERLOADED),
        script(ANTHROPIC_TEXT.body()));
    StepVerifier.withVirtualTime(() -> client(Dialect.ANTHROPIC_MESSAGES, transport).build().stream(REQUEST)
            .as(LlmResponse::aggregate))
        .thenAwait(Duration.ofSeconds(1))
        .assertNext(r -> assertThat(r.text()).isEqualTo("Take the TGV."))
        .verifyComplete();
    assertThat(transport.attempts).hasSize(2);
  }
}
