package io.breakwater.internal.limit;

/**
 * Whether a shared limit's store was found unreachable: then it is left alone for
 * {@link SharedSettings#STORE_RETRY}, and the limit's calls fail open or closed without asking it. Thread-safe.
 */
final class StoreOutage {

  private volatile boolean down;
  private volatile long until;

  /** Whether the store is still to be left alone at {@code now}; clears an outage that is over. */
  boolean leaveAlone(long now) {
    if (down && now - until < 0) {
      return true;
    }
    down = false;
    return false;
  }

  /** The store did not answer at {@code now}. */
  void began(long now) {
    until = now + SharedSettings.STORE_RETRY.toNanos();
    down = true;
  }
}
