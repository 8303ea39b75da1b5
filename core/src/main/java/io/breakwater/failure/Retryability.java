package io.breakwater.failure;

/**
 * Whether retrying can help after a failure of some {@link FailureKind}.
 *
 * <ul>
 *   <li>{@link #RETRYABLE}: a transient fault (a timeout, a dropped connection, a 429, a 5xx); another attempt may
 *       succeed.</li>
 *   <li>{@link #NON_RETRYABLE}: the same request will fail the same way (invalid arguments, 4xx, business rules,
 *       {@link Error}s), or there is no time or budget left to try.</li>
 *   <li>{@link #UNKNOWN}: nobody could tell; retried once, then treated as {@link #NON_RETRYABLE}.</li>
 * </ul>
 */
public enum Retryability {
  RETRYABLE,
  NON_RETRYABLE,
  UNKNOWN
}
