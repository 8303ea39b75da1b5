package io.breakwater;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.StepBudgetExhaustedException;
import io.breakwater.agent.TokenBudgetExhaustedException;
import io.breakwater.agent.ToolArgumentsRefusedException;
import io.breakwater.agent.ToolMisconfiguredException;
import io.breakwater.agent.ToolRateLimitedException;
import io.breakwater.agent.ToolUnavailableException;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerOpenException;
import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.hedge.UnsafeHedgeException;
import io.breakwater.http.BodyTooLargeException;
import io.breakwater.idempotency.CachedFailureException;
import io.breakwater.idempotency.IdempotencyInFlightException;
import io.breakwater.idempotency.IdempotencyKeyMismatchException;
import io.breakwater.idempotency.IdempotencyLimitException;
import io.breakwater.idempotency.StoreUnavailableException;
import io.breakwater.idempotency.WriteOutcomeUnknownException;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.retry.RetryAttempt;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryStopReason;
import io.breakwater.retry.UnsafeRetryException;
import io.breakwater.stream.FirstItemTimeoutException;
import io.breakwater.stream.IdleTimeoutException;
import io.breakwater.stream.StreamTimeoutException;
import io.breakwater.stream.StreamTruncatedByTimeoutException;
import io.breakwater.stream.StreamTruncatedException;
import io.breakwater.stream.llm.FinishReason;
import io.breakwater.stream.llm.LlmChoice;
import io.breakwater.stream.llm.LlmIncompleteException;
import io.breakwater.stream.llm.LlmResponse;
import io.breakwater.stream.llm.LlmStreamException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * What a user of each Breakwater exception relies on: its message, its source and failure kind, the types it can be
 * caught as, its cause, and that it carries no stack trace.
 */
class BreakwaterExceptionsTest {

  @Test
  void aCallTimeoutIsARetryableTimeoutThatNamesTheCallAndItsBudget() {
    CallTimeoutException e = new CallTimeoutException("weather", Duration.ofSeconds(12), Duration.ofMillis(12_500));
    assertTimeout(e, "weather", FailureKind.TIMEOUT,
        "Call 'weather' timed out after running 12.5s (its per-call time limit: 12s)");
    assertThat(e.budget()).isEqualTo(Duration.ofSeconds(12));
    assertThat(e.used()).isEqualTo(Duration.ofMillis(12_500));
    assertThat(new CallTimeoutException("per-call", Duration.ofSeconds(1), Duration.ofSeconds(1)))
        .hasMessage("A call timed out after running 1s (its per-call time limit: 1s)");
  }

  @Test
  void anExceededDeadlineIsATimeoutThatSaysHowMuchOfItsBudgetWasUsed() {
    DeadlineExceededException e = new DeadlineExceededException("plan-trip", Duration.ofSeconds(10),
        Duration.ofSeconds(11));
    assertTimeout(e, "plan-trip", FailureKind.DEADLINE_EXCEEDED, "Deadline 'plan-trip' exceeded: 11s of 10s used");
    assertThat(e.budget()).isEqualTo(Duration.ofSeconds(10));
    assertThat(e.used()).isEqualTo(Duration.ofSeconds(11));
    assertTimeout(new DeadlineExceededException("plan-trip", Duration.ofSeconds(10), Duration.ofSeconds(9),
        "too little left for another attempt"), "plan-trip", FailureKind.DEADLINE_EXCEEDED,
        "Deadline 'plan-trip' exceeded: 9s of 10s used; too little left for another attempt");
  }

  @Test
  void aStreamTimeoutIsATimeoutThatNamesItsClock() {
    FirstItemTimeoutException first = new FirstItemTimeoutException(Duration.ofSeconds(10), Duration.ofMillis(10_002));
    assertTimeout(first, "firstItemTimeout", FailureKind.TIMEOUT,
        "Stream gave no first item in 10.002s (first-item timeout 10s)");
    assertThat(first).isInstanceOf(StreamTimeoutException.class);
    assertThat(first.firstItemTimeout()).isEqualTo(first.timeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(first.waited()).isEqualTo(first.elapsed()).isEqualTo(Duration.ofMillis(10_002));

    IdleTimeoutException idle = new IdleTimeoutException(Duration.ofSeconds(3), Duration.ofSeconds(4));
    assertTimeout(idle, "idleTimeout", FailureKind.TIMEOUT, "Stream made no progress for 4s (idle timeout 3s)");
    assertThat(idle).isInstanceOf(StreamTimeoutException.class);
    assertThat(idle.idleTimeout()).isEqualTo(idle.timeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(idle.sinceProgress()).isEqualTo(idle.elapsed()).isEqualTo(Duration.ofSeconds(4));
  }

  @Test
  void aTruncatedStreamCarriesWhatWasDeliveredAndTheKindOfWhatCutIt() {
    StreamTruncatedException ended = new StreamTruncatedException("llm:openai_chat", "Hello", 3, null);
    assertRuntime(ended, "llm:openai_chat", FailureKind.CONNECTION,
        "Stream from llm:openai_chat ended without its terminal event after 3 items (5 chars of partial output "
            + "attached)");
    assertThat(ended.partialOutput()).isEqualTo("Hello");
    assertThat(ended.itemsDelivered()).isEqualTo(3);
    assertThat(ended.partialResult()).isNull();
    assertThat(ended).hasNoCause();

    HttpStatusException cut = new HttpStatusException(503);
    StreamTruncatedException failed = new StreamTruncatedException("llm:openai_chat", "Hel", 2, "partial",
        FailureKind.SERVER_ERROR, cut);
    assertRuntime(failed, "llm:openai_chat", FailureKind.SERVER_ERROR,
        "Stream from llm:openai_chat failed: HttpStatusException: HTTP 503 after 2 items (3 chars of partial "
            + "output attached)");
    assertThat(failed.partialResult()).isEqualTo("partial");
    assertThat(failed).hasCause(cut);
    assertThat(new StreamTruncatedException("s", "", 0, new ConnectException("refused")).failureKind())
        .isEqualTo(FailureKind.CONNECTION);
  }

  @Test
  void aStreamCutByATimeoutIsATruncationCaughtAsATimeout() {
    IdleTimeoutException stall = new IdleTimeoutException(Duration.ofSeconds(3), Duration.ofSeconds(3));
    StreamTruncatedByTimeoutException e = new StreamTruncatedByTimeoutException("llm:anthropic", "Hi", 1,
        "partial", stall);
    assertTimeout(e, "llm:anthropic", FailureKind.TIMEOUT,
        "Stream from llm:anthropic failed: IdleTimeoutException: Stream made no progress for 3s (idle timeout 3s)"
            + " after 1 items (2 chars of partial output attached)");
    assertThat(e).hasCause(stall).isNotInstanceOf(StreamTruncatedException.class);
    assertThat(e.partialOutput()).isEqualTo("Hi");
    assertThat(e.itemsDelivered()).isEqualTo(1);
    assertThat(e.partialResult()).isEqualTo("partial");
  }

  @Test
  void unsafeHedgesAndRetriesAreMisconfigurationsThatSayWhatToChange() {
    assertRuntime(new UnsafeHedgeException("payments"), "payments", FailureKind.MISCONFIGURED,
        "Refusing to hedge 'payments': the call is a write that must not be sent twice, so a backup attempt could"
            + " repeat its side effect while the first is processed (an idempotency claim does not stop that)."
            + " Remove hedgedBy from writes, or, if the dependency deduplicates on the idempotency key sent with"
            + " every attempt, declare sideEffect(DEDUPLICATED_WRITE) around idempotentBy(..).");
    assertRuntime(new UnsafeRetryException("payments"), "payments", FailureKind.MISCONFIGURED,
        "Refusing to retry 'payments': the call is declared NON_IDEMPOTENT_WRITE and holds no idempotency key, so"
            + " a retry could repeat its side effect. Wrap it in idempotentBy(..) outside retryWithBudget, or declare"
            + " sideEffect(IDEMPOTENT_WRITE) if the API deduplicates requests itself.");
  }

  @Test
  void idempotencyFailuresNameTheirKeyAndKind() {
    assertRuntime(new CachedFailureException("order-1", FailureKind.BUSINESS, "card declined"), "order-1",
        FailureKind.BUSINESS, "card declined");
    IdempotencyInFlightException inFlight = new IdempotencyInFlightException("order-1", Duration.ofSeconds(20));
    assertRuntime(inFlight, "order-1", FailureKind.CONFLICT, "A call with idempotency key 'order-1' is still in "
        + "flight (its lease has 20s left): retry later to get its result");
    assertThat(inFlight.leaseRemaining()).isEqualTo(Duration.ofSeconds(20));
    assertRuntime(new IdempotencyKeyMismatchException("order-1"), "order-1", FailureKind.INVALID_ARGUMENT,
        "Idempotency key 'order-1' was used with another payload: nothing was run. Use a new key for a different "
            + "request, or leave transient fields out of the payload (excluding(..))");
    assertRuntime(new IdempotencyLimitException("order-1", "result too large"), "order-1",
        FailureKind.MISCONFIGURED, "result too large");
    ConnectException down = new ConnectException("refused");
    StoreUnavailableException unavailable = new StoreUnavailableException("order-1", down);
    assertRuntime(unavailable, "order-1", FailureKind.CONNECTION, "The idempotency store is unavailable, so the "
        + "call with key 'order-1' was not made (failing closed): java.net.ConnectException: refused");
    assertThat(unavailable).hasCause(down);
    String advice = "; it is not sent again under this key. Check with the dependency, then use a new key if it "
        + "must be done, or declare sideEffect(DEDUPLICATED_WRITE) if the dependency deduplicates on the key";
    assertRuntime(new WriteOutcomeUnknownException("order-1", null), "order-1", FailureKind.OUTCOME_UNKNOWN,
        "The write of idempotency key 'order-1' may already have happened (outcome unknown)" + advice);
    assertRuntime(new WriteOutcomeUnknownException("order-1", "the connection dropped"), "order-1",
        FailureKind.OUTCOME_UNKNOWN,
        "The write of idempotency key 'order-1' may already have happened (the connection dropped)" + advice);
  }

  @Test
  void rejectionsOfLimitsBreakersAndBodiesNameWhatRejected() {
    LimitExceededException limit = new LimitExceededException("search", LimitExceededException.Reason.QUEUE_FULL,
        Duration.ofSeconds(2), "its queue holds 10 calls");
    assertRuntime(limit, "search", FailureKind.LIMIT_EXCEEDED, "Limit 'search' refused the call: its queue holds 10"
        + " calls");
    assertThat(limit.reason()).isEqualTo(LimitExceededException.Reason.QUEUE_FULL);
    assertThat(limit.retryAfter()).contains(Duration.ofSeconds(2));

    CircuitBreakerOpenException open = CircuitBreakerOpenException.open("weather", Duration.ofSeconds(30), 2);
    assertRuntime(open, "weather", FailureKind.CIRCUIT_OPEN, "Circuit breaker 'weather' is OPEN: calls rejected for"
        + " 30s more, then 2 probes are let through");
    assertThat(open.state()).isEqualTo(CircuitBreaker.State.OPEN);
    assertThat(open.untilProbe()).isEqualTo(Duration.ofSeconds(30));
    assertThat(open.rampingUp()).isFalse();
    CircuitBreakerOpenException ramping = CircuitBreakerOpenException.rampingUp("weather", 0.25);
    assertRuntime(ramping, "weather", FailureKind.CIRCUIT_OPEN, "Circuit breaker 'weather' is ramping up after "
        + "recovery (state CLOSED): it admits 25 % of calls for now, growing to all of them, and held this one back;"
        + " the breaker is not open, a call a moment later may pass");
    assertThat(ramping.rampingUp()).isTrue();

    BodyTooLargeException body = new BodyTooLargeException(1024);
    assertRuntime(body, "http", FailureKind.MISCONFIGURED, "Response body is longer than 1024 bytes: reading "
        + "stopped there and the connection was closed; raise maxBodyBytes if such answers are expected");
    assertThat(body.maxBytes()).isEqualTo(1024);
  }

  @Test
  void anExhaustedRetryTakesTheKindOfItsLastAttemptAndHasItsErrorAsCause() {
    HttpStatusException last = new HttpStatusException(503);
    RetryExhaustedException e = new RetryExhaustedException("default", RetryStopReason.MAX_RETRIES, List.of(
        new RetryAttempt(1, FailureKind.SERVER_ERROR, Duration.ZERO, Instant.EPOCH, last)));
    assertRuntime(e, "default", FailureKind.SERVER_ERROR, e.getMessage());
    assertThat(e.getMessage()).startsWith("Retry policy 'default' gave up after 1 attempt: ")
        .endsWith("\n  #1 failed with server_error at 1970-01-01T00:00:00Z: io.breakwater.failure.HttpStatusException:"
            + " HTTP 503");
    assertThat(e.reason()).isEqualTo(RetryStopReason.MAX_RETRIES);
    assertThat(e.attempts()).hasSize(1);
    assertThat(e).hasCause(last);
  }

  @Test
  void anLlmStreamErrorTakesItsKindFromTheServersErrorType() {
    assertRuntime(new LlmStreamException("llm:anthropic", "overloaded_error", "", "Overloaded"), "llm:anthropic",
        FailureKind.SERVER_ERROR, "Stream error overloaded_error from llm:anthropic: Overloaded");
  }

  @Test
  void agentRejectionsNameTheToolOrTaskThatRefused() {
    assertRuntime(new TokenBudgetExhaustedException("trip", 1000, 1200), "trip", FailureKind.BUDGET_EXHAUSTED,
        "Task 'trip' spent 1200 tokens of its 1000: answer with what you have");
    assertRuntime(new StepBudgetExhaustedException("trip", 8), "trip", FailureKind.BUDGET_EXHAUSTED,
        "Task 'trip' used all of its 8 steps: answer with what you have");
    assertRuntime(new ToolUnavailableException("weather", FailureKind.TIMEOUT, 3), "weather",
        FailureKind.CIRCUIT_OPEN, "Tool 'weather' is unavailable for the rest of this task: it failed 3 times with "
            + "timeout");
    assertRuntime(new ToolArgumentsRefusedException("weather", FailureKind.INVALID_ARGUMENT, "no city", 1),
        "weather", FailureKind.INVALID_ARGUMENT, "Tool 'weather' refused these arguments 1 time in this task "
            + "(invalid_argument: no city); they were not sent again: change them");
    assertRuntime(new ToolRateLimitedException("weather", Duration.ofSeconds(5)), "weather",
        FailureKind.RATE_LIMITED, "Tool 'weather' is rate-limited: wait 5s before calling it again");
    IllegalStateException cause = new IllegalStateException("no client");
    ToolMisconfiguredException misconfigured = new ToolMisconfiguredException("weather", "no client", cause);
    assertRuntime(misconfigured, "weather", FailureKind.MISCONFIGURED, "Tool 'weather': no client");
    assertThat(misconfigured).hasCause(cause);
  }

  @Test
  void exceptionsSurviveSerializationWithTheirSourceKindAndMessage() {
    for (Throwable e : List.of(new CallTimeoutException("weather", Duration.ofSeconds(2), Duration.ofSeconds(3)),
        new UnsafeRetryException("payments"), new IdempotencyInFlightException("order-1", Duration.ofSeconds(1)),
        new IdleTimeoutException(Duration.ofSeconds(3), Duration.ofSeconds(4)),
        new TokenBudgetExhaustedException("trip", 10, 12))) {
      Throwable copy = roundTrip(e);
      assertThat(copy).isInstanceOf(e.getClass()).hasMessage(e.getMessage());
      assertThat(((BreakwaterException) copy).source()).isEqualTo(((BreakwaterException) e).source());
      assertThat(((BreakwaterException) copy).failureKind()).isEqualTo(((BreakwaterException) e).failureKind());
    }
  }

  @Test
  void theContextOfAnExceptionReadsTheSameOrEmptyOnADeserializedCopyNeverFailing() {
    StreamTruncatedException cut = roundTrip(new StreamTruncatedException("llm:openai_chat", "Hello, wor", 3,
        "a serializable partial result", FailureKind.CONNECTION, null));
    assertThat(cut.partialOutput()).isEqualTo("Hello, wor");
    assertThat(cut.itemsDelivered()).isEqualTo(3);
    assertThat(cut.partialResult()).isEqualTo("a serializable partial result");
    assertThat(cut.failureKind()).isEqualTo(FailureKind.CONNECTION);

    StreamTruncatedByTimeoutException stalled = roundTrip(new StreamTruncatedByTimeoutException("llm:anthropic",
        "Bonjour", 2, new Object(), new IdleTimeoutException(Duration.ofSeconds(3), Duration.ofSeconds(3))));
    assertThat(stalled.partialOutput()).isEqualTo("Bonjour");
    assertThat(stalled.itemsDelivered()).isEqualTo(2);
    assertThat(stalled.partialResult()).as("not serializable: left out").isNull();
    assertThat(stalled).hasCauseInstanceOf(IdleTimeoutException.class);

    RetryAttempt attempt = new RetryAttempt(1, FailureKind.SERVER_ERROR, Duration.ZERO, Instant.EPOCH,
        new HttpStatusException(503));
    RetryExhaustedException exhausted = roundTrip(new RetryExhaustedException("default",
        RetryStopReason.MAX_RETRIES, List.of(attempt)));
    assertThat(exhausted.attempts()).as("not serialized; the message lists them").isEmpty();
    assertThat(exhausted.getMessage()).contains("#1");

    HttpStatusException status = roundTrip(new HttpStatusException(429, java.util.Map.of("Retry-After",
        List.of("5"))));
    assertThat(status.status()).isEqualTo(429);
    assertThat(status.headers()).isEmpty();
    assertThat(status.header("Retry-After")).isEmpty();

    LlmStreamException overloaded = roundTrip(new LlmStreamException("llm:anthropic", "overloaded_error", "",
        "Overloaded"));
    assertThat(overloaded.partialResponse().text()).isEmpty();
    assertThat(overloaded.errorType()).isEqualTo("overloaded_error");
    LlmResponse paused = new LlmResponse("msg_1", "claude", List.of(new LlmChoice(0, "Searching", "", "", List.of(),
        List.of(), List.of(), List.of(), List.of(), List.of(), FinishReason.PAUSE, "pause_turn")), null, 1, true);
    LlmIncompleteException incomplete = roundTrip(new LlmIncompleteException("llm:anthropic", paused));
    assertThat(incomplete.response().text()).as("not serialized; the message names the finish reason").isEmpty();
    assertThat(incomplete.getMessage()).contains("PAUSE");
  }

  private static void assertTimeout(Throwable e, String source, FailureKind kind, String message) {
    assertThat(e).isInstanceOf(TimeoutException.class).isNotInstanceOf(RuntimeException.class);
    assertFailure(e, source, kind, message);
  }

  private static void assertRuntime(Throwable e, String source, FailureKind kind, String message) {
    assertThat(e).isInstanceOf(RuntimeException.class).isNotInstanceOf(TimeoutException.class);
    assertFailure(e, source, kind, message);
  }

  private static void assertFailure(Throwable e, String source, FailureKind kind, String message) {
    assertThat(e).hasMessage(message).isInstanceOf(BreakwaterException.class);
    assertThat(((BreakwaterException) e).source()).isEqualTo(source);
    assertThat(((BreakwaterException) e).failureKind()).isEqualTo(kind);
    assertThat(e.getStackTrace()).as("no stack trace").isEmpty();
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> E roundTrip(E e) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
        out.writeObject(e);
      }
      try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
        return (E) in.readObject();
      }
    } catch (IOException x) {
      throw new UncheckedIOException(x);
    } catch (ClassNotFoundException x) {
      throw new IllegalStateException(x);
    }
  }
}
