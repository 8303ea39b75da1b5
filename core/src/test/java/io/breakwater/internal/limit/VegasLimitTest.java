package io.breakwater.internal.limit;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.FailureKind;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * The adaptive limit's controller, sample by sample, against docs/limits.md ("Adaptive limits"): a window of about
 * {@code limit} calls (at least 10); the queue estimate {@code limit × (1 − rttNoLoad / rtt)}; up by
 * {@code max(1, log10(limit))} below 5 % queued when the window used at least half the limit, down by as much above
 * 15 %, 10 % off after a drop; {@code rttNoLoad} measured again every minute with the limit pinned to 3 for 20 calls.
 */
class VegasLimitTest {

  private static final long S = 1_000_000_000L;

  /** Records {@code calls} calls ending at {@code end}, each {@code rtt} long, with {@code inFlight} in flight. */
  private static int window(VegasLimit vegas, int calls, long end, long rtt, int inFlight) {
    int changed = -1;
    for (int i = 0; i < calls; i++) {
      changed = vegas.sample(end - rtt, end, false, inFlight);
      if (i < calls - 1) {
        assertThat(changed).as("call %d of a window of %d", i + 1, calls).isEqualTo(-1);
      }
    }
    return changed;
  }

  @Test
  void onlyTimeoutsServerErrorsConnectionFailuresAnd429sAreDrops() {
    EnumSet<FailureKind> drops = EnumSet.of(FailureKind.TIMEOUT, FailureKind.SERVER_ERROR, FailureKind.CONNECTION,
        FailureKind.RATE_LIMITED);
    for (FailureKind kind : FailureKind.values()) {
      assertThat(VegasLimit.isDrop(kind)).as(kind.name()).isEqualTo(drops.contains(kind));
    }
  }

  @Test
  void aWindowIsLimitCallsAndAtLeastTen() {
    assertThat(window(new VegasLimit(new AdaptiveSettings(20, 1, 200)), 20, S, 0, 10))
        .as("no queue, half the limit used: up by max(1, log10 20)").isEqualTo(21);
    assertThat(window(new VegasLimit(new AdaptiveSettings(4, 1, 200)), 10, S, 0, 2)).isEqualTo(5);
  }

  @Test
  void theLimitRisesOnlyWhenTheWindowUsedAtLeastHalfOfIt() {
    assertThat(window(new VegasLimit(new AdaptiveSettings(20, 1, 200)), 20, S, 100, 9)).isEqualTo(-1);
  }

  @Test
  void theQueueBoundsAreFiveAndFifteenPercentOfTheLimit() {
    // rttNoLoad 97 (the lowest), average 100: 3 of 100 queue, below 5: up by log10(100)
    VegasLimit low = new VegasLimit(new AdaptiveSettings(100, 1, 200));
    assertThat(halfAndHalf(low, 97, 103)).isEqualTo(102);
    // 10 of 100 queue, between 5 and 15: unchanged
    VegasLimit mid = new VegasLimit(new AdaptiveSettings(100, 1, 200));
    assertThat(halfAndHalf(mid, 90, 110)).isEqualTo(-1);
    // 20 of 100 queue: down by log10(100)
    VegasLimit high = new VegasLimit(new AdaptiveSettings(100, 1, 200));
    assertThat(halfAndHalf(high, 80, 120)).isEqualTo(98);
  }

  /** A window of 100 calls, half of them {@code fast} long, half {@code slow}, 60 in flight. */
  private static int halfAndHalf(VegasLimit vegas, long fast, long slow) {
    for (int i = 0; i < 99; i++) {
      assertThat(vegas.sample(0, i % 2 == 0 ? fast : slow, false, 60)).isEqualTo(-1);
    }
    return vegas.sample(0, slow, false, 60);
  }

  @Test
  void callsThatTookNoTimeQueueNothing() {
    VegasLimit vegas = new VegasLimit(new AdaptiveSettings(20, 1, 200));
    assertThat(window(vegas, 20, S, 0, 10)).isEqualTo(21);
    assertThat(window(vegas, 21, 2 * S, 100, 15)).as("rttNoLoad stays the 0 of the first window: all queue")
        .isEqualTo(19);
  }

  @Test
  void everyMinuteTheLimitIsPinnedToThreeForTwentyCallsThatMeasureTheLatencyWithoutLoadAgain() {
    VegasLimit vegas = new VegasLimit(new AdaptiveSettings(20, 1, 200));
    assertThat(window(vegas, 20, S, 100, 10)).isEqualTo(21);   // the first call ended at 1 s: probe at 61 s
    assertThat(window(vegas, 21, 61 * S - 1, 100, 11)).isEqualTo(22);
    assertThat(window(vegas, 22, 61 * S, 100, 11)).as("a minute after the first call: the probe").isEqualTo(3);
    assertThat(vegas.sample(61 * S - 1, 62 * S, false, 3)).as("started before the probe: not counted").isEqualTo(-1);
    for (int i = 0; i < 19; i++) {
      assertThat(vegas.sample(61 * S, 61 * S + 200, false, 3)).isEqualTo(-1);
    }
    assertThat(vegas.sample(61 * S, 61 * S + 200, false, 3)).as("the 20th probe call restores the limit")
        .isEqualTo(22);
    assertThat(window(vegas, 22, 70 * S, 200, 12)).as("200 is the latency without load now: nothing queues")
        .isEqualTo(23);
  }

  @Test
  void aLimitAlreadyAtTheProbesIsNotProbedAndIsAskedAgainAMinuteLater() {
    VegasLimit vegas = new VegasLimit(new AdaptiveSettings(3, 1, 200));
    assertThat(window(vegas, 10, S, 100, 2)).isEqualTo(4);
    assertThat(window(vegas, 10, 2 * S, 10_000, 4)).as("too much queues: back down to 3").isEqualTo(3);
    assertThat(window(vegas, 10, 61 * S, 100, 1)).as("due, but at 3 already: no probe").isEqualTo(-1);
    assertThat(window(vegas, 10, 62 * S, 100, 2)).as("the next probe is a minute later").isEqualTo(4);
  }
}
