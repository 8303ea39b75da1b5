package io.breakwater.idempotency;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.Durations;
import io.breakwater.internal.failure.RuntimeFailure;
import java.time.Duration;

/**
 * A duplicate of the call is still running under the same key, and the policy says not to wait
 * ({@link IdempotencyPolicy.Builder#failFastWhenInFlight()}). Kind {@link FailureKind#CONFLICT}: retrying later
 * returns the first call's result.
 */
public final class IdempotencyInFlightException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  private final Duration leaseRemaining;

  public IdempotencyInFlightException(String key, Duration leaseRemaining) {
    super(key, FailureKind.CONFLICT, "A call with idempotency key '" + key + "' is still in flight (its lease has "
        + Durations.format(leaseRemaining) + " left): retry later to get its result", null);
    this.leaseRemaining = leaseRemaining;
  }

  public Duration leaseRemaining() {
    return leaseRemaining;
  }
}
