package io.breakwater.internal.limit;

import java.time.Duration;
import java.util.Objects;

/**
 * How a limit shared through a store behaves towards the store: its operations' timeout, the leases of concurrency
 * permits, how often a waiting call asks again, and whether an unreachable store lets calls through (on a local limit
 * of the same size) or refuses them.
 */
public record SharedSettings(Duration operationTimeout, Duration lease, Duration pollInterval, boolean failOpen) {

  public static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofMillis(500);
  public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
  public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMillis(50);
  /** How long a limit that found its store unreachable keeps to its local fallback before it asks the store again. */
  public static final Duration STORE_RETRY = Duration.ofSeconds(1);

  public SharedSettings {
    Objects.requireNonNull(operationTimeout, "operationTimeout");
    Objects.requireNonNull(lease, "lease");
    Objects.requireNonNull(pollInterval, "pollInterval");
    positive("operationTimeout", operationTimeout);
    positive("lease", lease);
    positive("pollInterval", pollInterval);
    if (pollInterval.compareTo(Duration.ofMillis(1)) < 0) {   // a shorter one is a busy loop of store calls
      throw new IllegalArgumentException("Shared limit pollInterval is " + pollInterval + ": give 1 ms or more (a "
          + "queued call asks the store again after each)");
    }
    if (lease.compareTo(Duration.ofMillis(30)) < 0) {
      throw new IllegalArgumentException("Shared limit lease is " + lease + ": give at least 30 ms (permits are "
          + "renewed every third of it)");
    }
  }

  private static void positive(String what, Duration d) {
    if (d.isNegative() || d.isZero() || d.compareTo(Duration.ofDays(1)) > 0) {
      throw new IllegalArgumentException("Shared limit " + what + " is " + d + ": give a positive duration of at "
          + "most a day");
    }
  }
}
