package io.breakwater.breaker;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.Durations;
import io.breakwater.internal.failure.RuntimeFailure;
import java.time.Duration;

/**
 * Signalled, without subscribing upstream, when a circuit breaker rejects a call: it is {@code OPEN}, it is
 * {@code HALF_OPEN} and its probes are taken, or it has just closed and is ramping traffic back up.
 *
 * <p>Its kind is {@link FailureKind#CIRCUIT_OPEN}, which is non-retryable: retrying against the same open breaker
 * only burns the budget, so {@code retryWithBudget} passes it through. Fallbacks still apply:
 *
 * <pre>{@code
 * search(query)
 *     .transformDeferred(guardedBy(breaker))
 *     .onErrorResume(CircuitBreakerOpenException.class, e -> cachedResults(query));
 * }</pre>
 *
 * <p>It names the breaker that rejected the call ({@link #source()}; with families, the family's name when the family
 * rejected it), that breaker's {@link #state()} and how long until it next lets a probe through
 * ({@link #untilProbe()}, zero when that may happen any time). A call held back while the breaker ramps traffic up
 * after recovering is told apart by {@link #rampingUp()}: the breaker is {@code CLOSED}, the dependency is taking
 * traffic back, and a call a moment later may well pass. It carries no stack trace.
 */
public final class CircuitBreakerOpenException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  private final CircuitBreaker.State state;
  private final Duration untilProbe;

  public CircuitBreakerOpenException(String breaker, CircuitBreaker.State state, Duration untilProbe,
      String detail) {
    super(breaker, FailureKind.CIRCUIT_OPEN, "Circuit breaker '" + breaker + "' is "
        + (state == CircuitBreaker.State.CLOSED ? "ramping up after recovery (state CLOSED)" : state) + ": " + detail,
        null);
    this.state = state;
    this.untilProbe = untilProbe;
  }

  /** A rejection by an {@code OPEN} breaker with one half-open probe, whose probe is allowed in {@code untilProbe}. */
  public static CircuitBreakerOpenException open(String breaker, Duration untilProbe) {
    return open(breaker, untilProbe, 1);
  }

  /** A rejection by an {@code OPEN} breaker that lets {@code probes} probes through in {@code untilProbe}. */
  public static CircuitBreakerOpenException open(String breaker, Duration untilProbe, int probes) {
    return new CircuitBreakerOpenException(breaker, CircuitBreaker.State.OPEN, untilProbe,
        "calls rejected for " + Durations.format(untilProbe) + " more, then " + probes
            + (probes == 1 ? " probe is" : " probes are") + " let through");
  }

  /**
   * A call held back by a {@code CLOSED} breaker ramping traffic up after recovery, which admitted {@code admitted}
   * (0 to 1) of the calls when it held this one back.
   */
  public static CircuitBreakerOpenException rampingUp(String breaker, double admitted) {
    return new CircuitBreakerOpenException(breaker, CircuitBreaker.State.CLOSED, Duration.ZERO,
        "it admits " + Math.round(admitted * 100) + " % of calls for now, growing to all of them, and held this one "
            + "back; the breaker is not open, a call a moment later may pass");
  }

  /**
   * Whether the breaker held the call back while ramping traffic up after recovering ({@link #state()} is
   * {@code CLOSED}), rather than rejecting it while {@code OPEN} or {@code HALF_OPEN}.
   */
  public boolean rampingUp() {
    return state == CircuitBreaker.State.CLOSED;
  }

  /** The rejecting breaker's state when it rejected the call. */
  public CircuitBreaker.State state() {
    return state;
  }

  /** How long until the breaker lets a probe through; zero when it may do so at any time. */
  public Duration untilProbe() {
    return untilProbe;
  }
}
