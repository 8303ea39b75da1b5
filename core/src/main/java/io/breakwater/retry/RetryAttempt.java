package io.breakwater.retry;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.internal.Durations;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeoutException;

/**
 * One failed attempt, as listed by {@link RetryExhaustedException#attempts()}. Immutable.
 *
 * <pre>{@code
 * e.attempts().forEach(a -> log.warn("attempt {} failed with {} after waiting {}", a.number(), a.kind(),
 *     a.delayBefore()));
 * }</pre>
 *
 * @param number the attempt's number, 1 for the first call
 * @param kind how its failure was classified
 * @param delayBefore how long was waited before it (zero for the first attempt)
 * @param failedAt when it failed, on the scheduler's clock
 * @param error what it failed with
 *
 * <p>{@link #toString()} names the error's class (with the status of an HTTP error, and the budget of a
 * Breakwater timeout), not its message: error messages may quote arguments or credentials, and this text becomes
 * part of {@link RetryExhaustedException}'s message. The error itself is {@link #error()} (and the last one is the
 * exception's cause).
 */
public record RetryAttempt(int number, FailureKind kind, Duration delayBefore, Instant failedAt, Throwable error) {

  @Override
  public String toString() {
    String backoff = delayBefore.isZero() ? "" : " (sent after a " + Durations.format(delayBefore) + " backoff)";
    return "#" + number + backoff + " failed with " + kind.tag() + " at " + failedAt + ": " + describe(error);
  }

  /** Breakwater's timeouts in full (names and durations only); an HTTP error by its status; others by class. */
  private static String describe(Throwable error) {
    if (error instanceof BreakwaterException && error instanceof TimeoutException) {
      return error.toString();
    }
    if (error instanceof HttpStatusException http) {
      return http.getClass().getName() + ": HTTP " + http.status();
    }
    return error.getClass().getName();
  }
}
