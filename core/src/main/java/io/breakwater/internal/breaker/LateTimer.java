package io.breakwater.internal.breaker;

import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.internal.Saturating;

/**
 * How late the timer of one of our own per-call timeouts fired: a {@link CallTimeoutException} says how long the call
 * ran ({@code used}) and what it was given ({@code budget}); the difference is the timer's lateness. A timer that fires
 * well after it was due shows that our own process was starved (a saturated CPU at a cold start, a long GC pause), not
 * that the dependency was slow. Needs no probe and no clock: on a virtual clock timers fire when due, so it finds no
 * lateness there.
 */
final class LateTimer {

  /** The causes looked through for the timeout (a wrapped one is still ours). */
  private static final int MAX_DEPTH = 8;

  private LateTimer() {}

  /** How late, in nanoseconds, the per-call timer that raised {@code error} (or a cause of it) fired; 0 if none did. */
  static long lateness(Throwable error) {
    Throwable t = error;
    for (int depth = 0; t != null && depth < MAX_DEPTH; depth++) {
      if (t instanceof CallTimeoutException timeout) {
        return Math.max(0, Saturating.nanos(timeout.used()) - Saturating.nanos(timeout.budget()));
      }
      t = t.getCause() == t ? null : t.getCause();
    }
    return 0;
  }
}
