package io.breakwater.failure;

/**
 * What went wrong with a call, in terms a retry, a breaker, a fallback and a model can act on. Each kind has a
 * {@link #retryability()}; a {@link FailureClassifier} maps exceptions to kinds.
 *
 * <table>
 *   <caption>Failure kinds</caption>
 *   <tr><th>kind</th><th>retryability</th><th>typical cause</th></tr>
 *   <tr><td>{@link #TIMEOUT}</td><td>retryable</td><td>a call or a stream took too long; HTTP 408</td></tr>
 *   <tr><td>{@link #CONNECTION}</td><td>retryable</td><td>connect refused, connection reset, premature close</td></tr>
 *   <tr><td>{@link #RATE_LIMITED}</td><td>retryable</td><td>HTTP 429: retry later, honouring Retry-After</td></tr>
 *   <tr><td>{@link #SERVER_ERROR}</td><td>retryable</td><td>HTTP 5xx</td></tr>
 *   <tr><td>{@link #INVALID_ARGUMENT}</td><td>non-retryable</td><td>{@link IllegalArgumentException}; HTTP 400,
 *       422</td></tr>
 *   <tr><td>{@link #CLIENT_ERROR}</td><td>non-retryable</td><td>HTTP 401, 403, 404 and other 4xx</td></tr>
 *   <tr><td>{@link #BUSINESS}</td><td>non-retryable</td><td>the dependency refused by its own rules; map your
 *       exceptions to it</td></tr>
 *   <tr><td>{@link #FATAL}</td><td>non-retryable</td><td>a {@link java.lang.Error}</td></tr>
 *   <tr><td>{@link #DEADLINE_EXCEEDED}</td><td>non-retryable</td><td>the task's deadline passed: no time is left
 *       for another attempt</td></tr>
 *   <tr><td>{@link #CIRCUIT_OPEN}</td><td>non-retryable</td><td>a breaker rejected the call; retrying against the
 *       same open breaker is pointless (fallbacks still apply)</td></tr>
 *   <tr><td>{@link #BUDGET_EXHAUSTED}</td><td>non-retryable</td><td>a retry, step or token budget ran out</td></tr>
 *   <tr><td>{@link #CONFLICT}</td><td>retryable</td><td>a duplicate of the call is still in flight (same idempotency
 *       key); try again once it has finished</td></tr>
 *   <tr><td>{@link #LIMIT_EXCEEDED}</td><td>non-retryable</td><td>Breakwater's own concurrency or rate limit
 *       refused the call: no permit within its deadline or max wait. Retrying here only queues again; fallbacks
 *       apply, and the exception says when it could run</td></tr>
 *   <tr><td>{@link #OUTCOME_UNKNOWN}</td><td>non-retryable</td><td>a non-idempotent write under this idempotency
 *       key may have happened (its attempt was sent, then failed without proof or was cancelled): it is not sent
 *       again under the key; reconcile with the dependency</td></tr>
 *   <tr><td>{@link #MISCONFIGURED}</td><td>non-retryable</td><td>Breakwater's configuration refused the call (a key
 *       TTL shorter than the deadline, a result over the size limit, an unsafe retry); fix the configuration</td></tr>
 *   <tr><td>{@link #UNKNOWN}</td><td>unknown</td><td>anything no classifier recognised</td></tr>
 * </table>
 */
public enum FailureKind {
  TIMEOUT(Retryability.RETRYABLE),
  CONNECTION(Retryability.RETRYABLE),
  RATE_LIMITED(Retryability.RETRYABLE),
  SERVER_ERROR(Retryability.RETRYABLE),
  INVALID_ARGUMENT(Retryability.NON_RETRYABLE),
  CLIENT_ERROR(Retryability.NON_RETRYABLE),
  BUSINESS(Retryability.NON_RETRYABLE),
  FATAL(Retryability.NON_RETRYABLE),
  DEADLINE_EXCEEDED(Retryability.NON_RETRYABLE),
  CIRCUIT_OPEN(Retryability.NON_RETRYABLE),
  BUDGET_EXHAUSTED(Retryability.NON_RETRYABLE),
  CONFLICT(Retryability.RETRYABLE),
  LIMIT_EXCEEDED(Retryability.NON_RETRYABLE),
  MISCONFIGURED(Retryability.NON_RETRYABLE),
  OUTCOME_UNKNOWN(Retryability.NON_RETRYABLE),
  UNKNOWN(Retryability.UNKNOWN);

  private final Retryability retryability;

  FailureKind(Retryability retryability) {
    this.retryability = retryability;
  }

  /** Whether another attempt may succeed after a failure of this kind. */
  public Retryability retryability() {
    return retryability;
  }

  /** The kind's name as a metric tag or a log field: lower case, e.g. {@code rate_limited}. */
  public String tag() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
