package io.breakwater.testing;

import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK environment of this project's whitebox tests. The TCK waits 100 ms by default for a
 * signal that must come; on a loaded 2-core CI machine a GC pause or a descheduled thread exceeds that now and then
 * and fails a correct subscriber. Signals that must come are awaited up to 2 s (a correct subscriber sends them at
 * once, so this costs nothing); the wait for signals that must not come stays 100 ms, keeping the suite fast.
 */
public final class TckEnvironment {

  private static final long SIGNAL_TIMEOUT_MILLIS = 2_000;
  private static final long NO_SIGNAL_TIMEOUT_MILLIS = 100;

  private TckEnvironment() {}

  public static TestEnvironment forLoadedMachine() {
    return new TestEnvironment(SIGNAL_TIMEOUT_MILLIS, NO_SIGNAL_TIMEOUT_MILLIS);
  }
}
