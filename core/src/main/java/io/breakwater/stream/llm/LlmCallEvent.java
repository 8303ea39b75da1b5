package io.breakwater.stream.llm;

import io.breakwater.failure.FailureKind;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What one call of {@link LlmStreamClient#stream(Object)} did, given to the listener set with
 * {@link LlmStreamClient.Builder#callListener} when the call ends: how it ended, how many HTTP attempts it took
 * (retries before the first token and resumes after it), how long the first token took, and the usage. It quotes no
 * text of the request, the answer or the server.
 *
 * <pre>{@code
 * LlmStreamClient client = LlmStreamClient.builder(baseUrl, Dialect.OPENAI_CHAT)
 *     .callListener(e -> log.info("llm call {} after {} attempts, first token in {}", e.outcome(), e.attempts(),
 *         e.timeToFirstContent()))
 *     .build();
 * }</pre>
 *
 * @param source the client, e.g. {@code "llm:openai_chat"}
 * @param outcome how the call ended
 * @param attempts HTTP attempts made, the first and any hedges included
 * @param resumes how many of them resumed the stream after content
 * @param timeToFirstContent from subscription to the first content delivered, or {@code null} if none was
 * @param duration from subscription to the end
 * @param finishReason the first choice's finish reason ({@link FinishReason#NONE} if none)
 * @param usage the usage last reported, or {@code null}
 * @param failureKind the failure's kind, or {@code null} for {@link Outcome#COMPLETED} and
 *     {@link Outcome#CANCELLED}
 */
public record LlmCallEvent(String source, Outcome outcome, int attempts, int resumes,
    @Nullable Duration timeToFirstContent, Duration duration, FinishReason finishReason, @Nullable TokenUsage usage,
    @Nullable FailureKind failureKind) {

  public LlmCallEvent {
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(outcome, "outcome");
    Objects.requireNonNull(duration, "duration");
    Objects.requireNonNull(finishReason, "finishReason");
  }

  /** How a call ended. */
  public enum Outcome {
    /** The stream ended with its terminal event and a complete answer. */
    COMPLETED,
    /** The stream ended properly but the answer is incomplete ({@link LlmIncompleteException}). */
    INCOMPLETE,
    /** The call failed (the error reached the subscriber). */
    FAILED,
    /** The subscriber cancelled. */
    CANCELLED
  }
}
