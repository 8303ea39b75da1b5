package io.breakwater.idempotency;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The outcome of a call that ran as owner could not be recorded, so a duplicate may run the call again once the lease
 * ends. Given to {@link IdempotencyPolicy.Builder#onUnrecorded} and counted as outcome {@code unrecorded} (store
 * unavailable) or {@code fenced} (claim lost) of {@code breakwater.idempotency.calls}.
 *
 * @param key the call's key
 * @param tag the key's tag, as messages and logs show it ({@link IdempotencyPolicy#tag})
 * @param reason why it was not recorded
 * @param attempts how many times {@code complete} was sent
 * @param lastError the last store error, if any. Its message may quote the command's arguments (Redisson's timeouts
 *     do), which hold the result: log its class, not its message
 */
public record UnrecordedOutcome(
    IdempotencyKey key, String tag, Reason reason, int attempts, @Nullable Throwable lastError) {

  public UnrecordedOutcome {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(tag, "tag");
    Objects.requireNonNull(reason, "reason");
  }

  /** Why an outcome was not recorded. */
  public enum Reason {
    /** {@code complete} failed on every attempt until the lease ended (the store was unreachable or too slow). */
    STORE_UNAVAILABLE,
    /** The store answered that this owner no longer holds the claim: its lease ended and another owner took over. */
    FENCED
  }

  @Override
  public String toString() {
    return "UnrecordedOutcome[key=" + tag + ", reason=" + reason + ", attempts=" + attempts + ", lastError="
        + (lastError == null ? "none" : lastError.getClass().getName()) + "]";
  }
}
