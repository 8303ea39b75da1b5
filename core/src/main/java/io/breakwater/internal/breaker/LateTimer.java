package io.breakwater.internal.breaker;

import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.failure.CompositeFailures;

/**
 * How late the timer of one of our own per-call timeouts fired: a {@link CallTimeoutException} says how long the call
 * ran ({@code used}) and what it was given ({@code budget}); the difference is the timer's lateness. A timer that fires
 * well after it was due shows that our own process was starved (a saturated CPU at a cold start, a long GC pause), not
 * that the dependency was slow. Needs no probe and no clock: on a virtual clock timers fire when due, so it finds no
 * lateness there.
 */
final class LateTimer {

  private LateTimer() {}

  /**
   * How late, in nanoseconds, the per-call timer that raised {@code error} (or a cause of it: a wrapped one is still
   * ours) fired; 0 if none did.
   */
  static long lateness(Throwable error) {
    CallTimeoutException timeout = CompositeFailures.first(error, CallTimeoutException.class);
    return timeout == null ? 0 : Math.max(0, Saturating.nanos(timeout.used()) - Saturating.nanos(timeout.budget()));
  }
}
