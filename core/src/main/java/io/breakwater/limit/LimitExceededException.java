package io.breakwater.limit;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.RuntimeFailure;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Signalled, without subscribing upstream, when a {@link ConcurrencyLimit} or a {@link RateLimit} refuses a call: its
 * queue is full, it could not run before its deadline or max wait, it waited that long without a permit, it needs
 * more tokens than the limit ever holds, or a shared limit's store did not answer and the limit fails closed.
 *
 * <p>Its kind is {@link FailureKind#LIMIT_EXCEEDED}, which is not retryable: the limiter already waited as long as
 * the call allowed, so {@code retryWithBudget} passes it through instead of queueing the call again. Fallbacks apply,
 * and {@link #retryAfter()} says when the call could run, when the limit knows:
 *
 * <pre>{@code
 * llm.complete(prompt)
 *     .transformDeferred(throttledBy(openai))
 *     .onErrorResume(LimitExceededException.class, e -> Mono.just("busy, try again in "
 *         + e.retryAfter().map(Duration::toSeconds).orElse(1L) + " s"));
 * }</pre>
 *
 * <p>It names the limit that refused ({@link #source()}) and carries no stack trace.
 */
public final class LimitExceededException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  /** Why a limit refused a call. */
  public enum Reason {
    /** The limit's wait queue already holds its {@code maxQueue} calls. */
    QUEUE_FULL,
    /**
     * The call could not run before its deadline or the limit's {@code maxWait}, so it was refused at once instead
     * of waiting and timing out (a {@code maxWait} of zero refuses every call that finds no permit).
     */
    WOULD_WAIT_TOO_LONG,
    /** The call waited until its deadline or the limit's {@code maxWait} without getting a permit. */
    WAITED_TOO_LONG,
    /** The call needs more tokens than the rate limit ever holds: it can never run as it is. */
    TOO_HEAVY,
    /** A shared limit's store did not answer in time, and the limit is configured to fail closed. */
    STORE_UNAVAILABLE
  }

  private final Reason reason;
  @Nullable
  private final Duration retryAfter;

  /**
   * A refusal by the limit named {@code limit}.
   *
   * @param retryAfter when the call could run, or {@code null} when the limit cannot tell
   * @param detail what the limit saw, for the message
   */
  public LimitExceededException(String limit, Reason reason, @Nullable Duration retryAfter, String detail) {
    super(Objects.requireNonNull(limit, "limit"), FailureKind.LIMIT_EXCEEDED,
        "Limit '" + limit + "' refused the call: " + detail, null);
    this.reason = Objects.requireNonNull(reason, "reason");
    this.retryAfter = retryAfter;
  }

  /** Why the call was refused. */
  public Reason reason() {
    return reason;
  }

  /**
   * How long from the refusal until the call could run, as far as the limit can tell: a rate limit knows when its
   * permits come back; a concurrency limit cannot know when a call in flight ends, so it says nothing.
   */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }
}
