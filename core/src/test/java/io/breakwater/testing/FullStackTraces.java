package io.breakwater.testing;

import org.assertj.core.configuration.Configuration;

/**
 * AssertJ shows every frame of an unexpected exception, not its first three: a failure that happens once in a
 * hundred runs (a BlockHound report from an event loop, say) must be diagnosable from the one report it leaves.
 * Registered in {@code META-INF/services/org.assertj.core.configuration.Configuration}.
 */
public final class FullStackTraces extends Configuration {

  @Override
  public int maxStackTraceElementsDisplayed() {
    return 400;
  }

  /** Applies without printing the whole configuration at the start of every test JVM. */
  @Override
  public void applyAndDisplay() {
    apply();
  }
}
