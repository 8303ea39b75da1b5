package io.breakwater.idempotency;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;
import io.breakwater.internal.Durations;
import java.time.Duration;

/**
 * A duplicate of the call is still running under the same key, and the policy says not to wait
 * ({@link IdempotencyPolicy.Builder#failFastWhenInFlight()}). Kind {@link FailureKind#CONFLICT}: retrying later
 * returns the first call's result.
 */
public final class IdempotencyInFlightException extends RuntimeException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final String key;
  private final Duration leaseRemaining;

  public IdempotencyInFlightException(String key, Duration leaseRemaining) {
    super("A call with idempotency key '" + key + "' is still in flight (its lease has "
        + Durations.format(leaseRemaining) + " left): retry later to get its result");
    this.key = key;
    this.leaseRemaining = leaseRemaining;
  }

  @Override
  public String source() {
    return key;
  }

  @Override
  public FailureKind failureKind() {
    return FailureKind.CONFLICT;
  }

  public Duration leaseRemaining() {
    return leaseRemaining;
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
