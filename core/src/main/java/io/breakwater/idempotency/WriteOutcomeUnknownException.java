package io.breakwater.idempotency;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.RuntimeFailure;
import org.jspecify.annotations.Nullable;

/**
 * A non-idempotent write under this idempotency key may already have happened: an earlier call sent it and then
 * failed in a way that does not prove it was not processed (a timeout, a 5xx, a dropped connection), or was cancelled
 * after sending it. Breakwater does not send it again under this key. Ask the dependency what happened, then use a new
 * key if it must be done; or declare {@link SideEffect#DEDUPLICATED_WRITE} if the dependency deduplicates on the key
 * you send.
 *
 * <p>The owner that sent the write gets its own failure; every later duplicate within the policy's TTL gets this.
 * {@link FailureKind#OUTCOME_UNKNOWN}: not retryable.
 */
public final class WriteOutcomeUnknownException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  /**
   * @param key the idempotency key as messages name it
   * @param detail what happened to the write that was sent, or {@code null}
   */
  public WriteOutcomeUnknownException(String key, @Nullable String detail) {
    super(key, FailureKind.OUTCOME_UNKNOWN, "The write of idempotency key '" + key + "' may already have happened ("
        + (detail == null ? "outcome unknown" : detail) + "); it is not sent again under this key. Check with the"
        + " dependency, then use a new key if it must be done, or declare sideEffect(DEDUPLICATED_WRITE) if the"
        + " dependency deduplicates on the key", null);
  }
}
