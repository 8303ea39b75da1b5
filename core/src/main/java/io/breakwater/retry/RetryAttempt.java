package io.breakwater.retry;

import io.breakwater.failure.FailureKind;
import java.time.Duration;
import java.time.Instant;

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
 */
public record RetryAttempt(int number, FailureKind kind, Duration delayBefore, Instant failedAt, Throwable error) {

  @Override
  public String toString() {
    return "#" + number + " " + kind.tag() + (delayBefore.isZero() ? "" : " after " + io.breakwater.internal.Durations
        .format(delayBefore)) + " at " + failedAt + ": " + error;
  }
}
