package io.breakwater.idempotency;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.idempotency.InMemoryIdempotencyStore;
import io.breakwater.internal.Utf8;
import java.time.Duration;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Where {@code idempotentBy} keeps claims and outcomes. An SPI: {@link #inMemory()} is the default for one process;
 * {@code breakwater-redis-store} shares them across processes.
 *
 * <p>A record is either <b>in flight</b> (claimed by an owner token, with a lease) or <b>done</b> (an outcome kept
 * for a TTL). Every method is one atomic step; a distributed store should make {@link #claim} one round trip, so
 * that a hit costs one round trip and a miss two (claim, then complete).
 *
 * <pre>{@code
 * IdempotencyStore store = IdempotencyStore.inMemory();
 * Mono<Receipt> refund = payments.refund(order)
 *     .transformDeferred(idempotentBy(IdempotencyKey.explicit("payments.refund", order.id(), order), store,
 *         Receipt.class));
 * }</pre>
 *
 * <p>Implementations must be thread-safe and non-blocking.
 */
public interface IdempotencyStore {

  /**
   * Atomically: if {@code key} is free, or in flight with an expired lease, claim it for {@code owner} with
   * {@code lease} and answer {@link Acquired}; if it is done, answer {@link Done} with the outcome; if another owner
   * holds a live lease, answer {@link Busy}. A key held or done with another fingerprint answers {@link Mismatch}.
   * Claiming again with the same owner token while its lease is live answers {@link Acquired} (stores may resend a
   * claim after a response timeout).
   */
  Mono<Claim> claim(String key, String fingerprint, String owner, Duration lease);

  /**
   * Records the outcome of a claim and keeps it for {@code ttl}, only if {@code owner} still holds the claim. Answers
   * {@code false} when it does not (its lease expired and the key was claimed again, or it was released): fencing.
   */
  Mono<Boolean> complete(String key, String owner, Outcome outcome, Duration ttl);

  /** Frees the claim so that the next caller runs the call, only if {@code owner} still holds it. */
  Mono<Boolean> release(String key, String owner);

  /**
   * Extends the claim of {@code owner} to {@code lease} from now, only if {@code owner} still holds it (in flight, not
   * taken over). Answers {@code false} when it does not. {@code idempotentBy} renews every third of the lease while
   * the owner runs (a watchdog), so that a lease can stay short for crash recovery without a slow call losing its key.
   */
  Mono<Boolean> renew(String key, String owner, Duration lease);

  /**
   * Completes when the record of {@code key} may have changed (completed or released), so that waiting duplicates
   * can look again at once. Stores that cannot tell return {@link Mono#never()}, and waiters fall back to polling.
   */
  default Mono<Void> changed(String key) {
    return Mono.never();
  }

  /** The default bound of {@link #inMemory()}: 64 MiB of records, as weighed by their bytes. */
  long DEFAULT_IN_MEMORY_BYTES = 64L << 20;

  /**
   * A bounded, in-memory store with TTLs, timed by {@code Schedulers.parallel()}: at most 64 MiB of records, each
   * weighed by its bytes (key, fingerprint, owner, stored result and message).
   */
  static IdempotencyStore inMemory() {
    return inMemory(DEFAULT_IN_MEMORY_BYTES, Schedulers::parallel);
  }

  /**
   * A bounded, in-memory store: records weighing at most {@code maxBytes} together (each weighed by its bytes: key,
   * fingerprint, owner, stored result and message, plus a fixed overhead; the least valuable are evicted first), at
   * least 1 MiB; leases and TTLs read from {@code scheduler}'s clock.
   */
  static IdempotencyStore inMemory(long maxBytes, Supplier<Scheduler> scheduler) {
    return new InMemoryIdempotencyStore(maxBytes, scheduler);
  }

  /** The answer to a {@link #claim}. */
  sealed interface Claim permits Acquired, Done, Busy, Mismatch {}

  /**
   * The caller now holds the claim and must run the call. {@code tookOverExpired} is {@code true} when a previous
   * owner's lease had expired: that owner may have crashed mid-call.
   */
  record Acquired(boolean tookOverExpired) implements Claim {}

  /** The call already ran; here is its outcome. */
  record Done(Outcome outcome) implements Claim {}

  /** Another owner holds a live lease, which has {@code leaseRemaining} left. */
  record Busy(Duration leaseRemaining) implements Claim {}

  /** The key is held or done with another payload. */
  record Mismatch(String storedFingerprint) implements Claim {}

  /**
   * The stored outcome of a call: either a result as JSON ({@code "null"} for an empty result), or a failure that
   * policy chose to keep, by kind and message.
   */
  record Outcome(@Nullable String resultJson, @Nullable FailureKind failureKind, @Nullable String failureMessage) {

    public static Outcome success(String resultJson) {
      return new Outcome(resultJson, null, null);
    }

    public static Outcome failure(FailureKind kind, @Nullable String message) {
      return new Outcome(null, kind, message);
    }

    public boolean isFailure() {
      return failureKind != null;
    }

    /** The outcome's size in bytes as stored: its result and failure message encoded as UTF-8. */
    public long size() {
      return Utf8.length(resultJson) + Utf8.length(failureMessage);
    }
  }
}
