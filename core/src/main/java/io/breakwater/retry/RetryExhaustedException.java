package io.breakwater.retry;

import io.breakwater.BreakwaterException;
import io.breakwater.internal.deadline.DeadlineOperator;
import io.breakwater.internal.failure.RuntimeFailure;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Signalled when {@code retryWithBudget} stops retrying after at least one retry, or when a rule (max retries, a
 * budget, the deadline, {@code Retry-After}, {@code x-should-retry}) forbade a retry of a retryable failure. A first
 * failure that is not retryable reaches the subscriber unchanged instead.
 *
 * <p>Its cause is the last real error, its {@link #failureKind()} that error's kind, {@link #reason()} says why no
 * further retry was made and {@link #attempts()} lists every attempt, for logs and for feedback to a model:
 *
 * <pre>{@code
 * call.transformDeferred(retryWithBudget(policy))
 *     .onErrorResume(RetryExhaustedException.class, e ->
 *         Mono.just("gave up after " + e.attempts().size() + " attempts: " + e.reason()));
 * }</pre>
 *
 * <p>An outer {@code retryWithBudget} passes it through without retrying: the inner one already spent the retries
 * this failure deserved, so nested layers never multiply attempts.
 */
public final class RetryExhaustedException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  private final RetryStopReason reason;
  private final transient @Nullable List<RetryAttempt> attempts;   // not serialized: the message lists them

  /**
   * @param source the name of the retry policy
   * @param reason why no further retry was made
   * @param attempts every attempt, in order; the last one's kind is this failure's kind, its error the cause
   */
  public RetryExhaustedException(String source, RetryStopReason reason, List<RetryAttempt> attempts) {
    this(source, reason, List.copyOf(attempts), last(attempts));
  }

  private RetryExhaustedException(String source, RetryStopReason reason, List<RetryAttempt> attempts,
      RetryAttempt last) {
    super(source, last.kind(), message(source, reason, attempts), last.error());
    this.reason = reason;
    this.attempts = attempts;
  }

  private static RetryAttempt last(List<RetryAttempt> attempts) {
    if (attempts.isEmpty()) {
      throw new IllegalArgumentException("attempts is empty: a retry can only be exhausted after an attempt");
    }
    return attempts.get(attempts.size() - 1);
  }

  private static String message(String source, RetryStopReason reason, List<RetryAttempt> attempts) {
    StringBuilder b = new StringBuilder("Retry policy '").append(source).append("' gave up");
    String callee = callee(source, attempts);
    if (callee != null) {
      b.append(" on calls to '").append(callee).append('\'');
    }
    b.append(" after ").append(attempts.size()).append(attempts.size() == 1 ? " attempt: " : " attempts: ")
        .append(reason.describe());
    for (RetryAttempt a : attempts) {
      b.append("\n  ").append(a);
    }
    return b.toString();
  }

  /**
   * What the attempts called, when their failures name it and it is not the policy's own name: the tool, breaker or
   * call named by the last Breakwater failure; {@code null} otherwise.
   */
  private static @Nullable String callee(String policy, List<RetryAttempt> attempts) {
    if (attempts.isEmpty() || !(attempts.get(attempts.size() - 1).error() instanceof BreakwaterException last)) {
      return null;
    }
    String source = last.source();
    return source.equals(policy) || DeadlineOperator.UNNAMED_CALL.equals(source) ? null : source;
  }

  /** Why no further retry was made. */
  public RetryStopReason reason() {
    return reason;
  }

  /**
   * Every attempt, in order: failure kind, delay before it, and when it failed. Empty on a deserialized copy, whose
   * message still lists them.
   */
  public List<RetryAttempt> attempts() {
    return attempts == null ? List.of() : attempts;
  }
}
