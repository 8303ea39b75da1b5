package io.breakwater.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The load harness's smoke plan, end to end: a server JVM on loopback and every scenario at small counts. It asserts
 * what holds on any machine (every scenario reported, the cancellation storm closed every connection and left no
 * timer); the timing checks are figures of a full run on a quiet machine, not of this one.
 */
class LoadHarnessIT {

  @Test
  @Timeout(300)
  void smokePlanRunsEveryScenarioAndTheStormLeavesNothingOpen() throws Exception {
    Report report = LoadHarness.run(LoadHarness.Plan.SMOKE);
    String table = report.markdown("smoke");
    System.out.println(table);

    assertThat(table).contains("| cold-start soak |", "| streaming ramp |", "| first-token budget |",
        "| faults under load |", "| cancellation storm |", "| tool calls, Breakwater defaults |",
        "| tool calls, Reactor baseline |");
    assertThat(report.passed("cancellation storm: every connection closed, no timer left")).isTrue();
  }
}
