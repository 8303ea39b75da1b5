package io.breakwater.retry;

/**
 * Why {@code retryWithBudget} made no further retry, as reported by {@link RetryExhaustedException#reason()} and
 * tagged on the {@code breakwater.retry.rejections} meter ({@link #tag()}).
 *
 * <pre>{@code
 * call.transformDeferred(retryWithBudget(policy))
 *     .onErrorResume(RetryExhaustedException.class, e -> e.reason() == RetryStopReason.DEADLINE
 *         ? Mono.just(cachedAnswer) : Mono.error(e));
 * }</pre>
 */
public enum RetryStopReason {
  /** The policy's {@code maxRetries} were used up. */
  MAX_RETRIES,
  /** The task's retry budget ({@code withRetryBudget}) was used up by this or other calls of the task. */
  TASK_BUDGET,
  /** The dependency's {@link RetryBudget} refused: retries are already too large a share of its traffic. */
  DEPENDENCY_BUDGET,
  /** The backoff delay plus the minimum useful attempt time would pass the deadline. */
  DEADLINE,
  /** The dependency asked (Retry-After) to wait past the deadline. */
  RETRY_AFTER_BEYOND_DEADLINE,
  /** The dependency answered {@code x-should-retry: false}. */
  SHOULD_NOT_RETRY,
  /** The failure can never succeed on retry (or was of an unknown kind and had its one retry already). */
  NON_RETRYABLE,
  /** The stream had already emitted items and no {@link StreamResume} was given, so a retry would duplicate them. */
  ALREADY_EMITTED,
  /**
   * The call is a write that must not be sent twice and the failure leaves open whether it was processed (a timeout,
   * a 5xx, a connection lost after the request was written): see {@link io.breakwater.idempotency.SideEffect}.
   */
  WRITE_OUTCOME_UNKNOWN;

  /** The reason as a metric tag: lower case, e.g. {@code dependency_budget}. */
  public String tag() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  /** A short phrase for messages, e.g. {@code "the dependency's retry budget is used up"}. */
  String describe() {
    return switch (this) {
      case MAX_RETRIES -> "max retries reached";
      case TASK_BUDGET -> "the task's retry budget is used up";
      case DEPENDENCY_BUDGET -> "the dependency's retry budget is used up";
      case DEADLINE -> "the next attempt would not fit before the deadline";
      case RETRY_AFTER_BEYOND_DEADLINE -> "Retry-After asks to wait past the deadline";
      case SHOULD_NOT_RETRY -> "the dependency answered x-should-retry: false";
      case NON_RETRYABLE -> "the failure is not retryable";
      case ALREADY_EMITTED -> "the stream already emitted items and cannot be resumed";
      case WRITE_OUTCOME_UNKNOWN -> "the write may have been processed, so it is not sent again";
    };
  }
}
