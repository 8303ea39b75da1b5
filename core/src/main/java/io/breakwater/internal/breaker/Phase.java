package io.breakwater.internal.breaker;

import io.breakwater.breaker.CircuitBreaker.State;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * One episode of a breaker's life: an immutable snapshot of its state, replaced as a whole (by compare-and-set) on
 * every transition. Calls remember the phase that admitted them and report their outcome to it, so that an outcome
 * arriving after a transition never counts towards the next episode.
 */
final class Phase {

  final State state;
  /** Increases by one with every transition; orders the transition events. */
  final long gen;
  final long since;
  /** {@code OPEN}: when a probe is allowed. {@code CLOSED}: when the ramp-up ends. */
  final long until;
  /** The open duration of the latest opening (grows with {@link #reopens}). */
  final long openNanos;
  /** How many times in a row the breaker reopened without a full close. */
  final int reopens;
  final boolean ramping;
  /** {@code CLOSED}; {@code OPEN} keeps the window it opened from, read only to report it. */
  final SlidingWindow window;
  /** {@code HALF_OPEN} only: probe permits left, and probes that succeeded. */
  final AtomicInteger permits;
  final AtomicInteger probeSuccesses;
  /** {@code CLOSED} while ramping: how many calls asked to be admitted. */
  final AtomicLong rampSeq;

  // permits and probeSuccesses are null outside HALF_OPEN, rampSeq when not ramping and window in HALF_OPEN (and
  // an OPEN with no last window): each is read only in the state that sets it
  @SuppressWarnings("NullAway")
  private Phase(State state, long gen, long since, long until, long openNanos, int reopens, boolean ramping,
      SlidingWindow window, int permits) {
    this.state = state;
    this.gen = gen;
    this.since = since;
    this.until = until;
    this.openNanos = openNanos;
    this.reopens = reopens;
    this.ramping = ramping;
    this.window = window;
    this.permits = state == State.HALF_OPEN ? new AtomicInteger(permits) : null;
    this.probeSuccesses = state == State.HALF_OPEN ? new AtomicInteger() : null;
    this.rampSeq = ramping ? new AtomicLong() : null;
  }

  static Phase closed(long gen, long since, long rampNanos, long openNanos, int reopens, SlidingWindow window) {
    boolean ramping = rampNanos > 0;
    return new Phase(State.CLOSED, gen, since, ramping ? since + rampNanos : since, openNanos, reopens, ramping,
        window, 0);
  }

  @SuppressWarnings("NullAway")   // see the constructor: an OPEN phase's window is only reported
  static Phase open(long gen, long since, long openNanos, int reopens) {
    return open(gen, since, openNanos, reopens, null);
  }

  /** An open episode that keeps, for reporting only, the window of the closed episode it ended (or null). */
  @SuppressWarnings("NullAway")   // see the constructor: an OPEN phase's window is only reported
  static Phase open(long gen, long since, long openNanos, int reopens, @Nullable SlidingWindow lastWindow) {
    return new Phase(State.OPEN, gen, since, since + openNanos, openNanos, reopens, false, lastWindow, 0);
  }

  @SuppressWarnings("NullAway")   // see the constructor: a HALF_OPEN phase has no window
  static Phase halfOpen(long gen, long since, long openNanos, int reopens, int probes) {
    return new Phase(State.HALF_OPEN, gen, since, since, openNanos, reopens, false, null, probes);
  }

  /** The same closed episode (same window, same generation), no longer ramping. */
  Phase rampDone() {
    return new Phase(State.CLOSED, gen, since, until, openNanos, reopens, false, window, 0);
  }

  boolean isProbe() {
    return state == State.HALF_OPEN;
  }

  /** Takes a probe permit if one is left. */
  boolean takePermit() {
    for (;;) {
      int left = permits.get();
      if (left <= 0) {
        return false;
      }
      if (permits.compareAndSet(left, left - 1)) {
        return true;
      }
    }
  }
}
