package io.breakwater.internal.hedge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.breakwater.hedge.HedgePolicy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The adaptive delay's window (docs/hedging.md, "Adaptive delay"): two histograms of 1 000 answers each, recorded
 * into in turn, so that the percentile covers the last 1 000 to 2 000 answers; latencies from a microsecond to an
 * hour; the percentile recomputed with every answer while warming up and then every 16 answers; no delay until the
 * warm-up's answers are known. The 100th percentile (the slowest answer in the window) makes each answer's effect
 * visible.
 */
class LatencyWindowTest {

  static final long FAST = Duration.ofMillis(100).toNanos();
  static final long SLOW = Duration.ofSeconds(10).toNanos();

  static void record(LatencyWindow window, long nanos, int times) {
    for (int i = 0; i < times; i++) {
      window.record(nanos);
    }
  }

  /** Two significant digits: a recorded latency comes back within 1 %. */
  static void assertDelayIsAbout(LatencyWindow window, long nanos) {
    assertThat((double) window.delayNanos()).isCloseTo(nanos, within(nanos / 100.0));
  }

  @Test
  void noDelayIsGivenUntilTheWarmUpsAnswersAreKnownAndEveryAnswerIsCounted() {
    LatencyWindow window = new LatencyWindow(100, 20);
    record(window, FAST, 19);
    assertThat(window.delayNanos()).isEqualTo(-1);
    assertThat(window.samples()).isEqualTo(19);
    window.record(FAST);
    assertDelayIsAbout(window, FAST);
    assertThat(window.samples()).isEqualTo(20);
  }

  @Test
  void whileWarmingUpThePercentileFollowsEveryAnswerUpToTwiceTheWarmUp() {
    LatencyWindow window = new LatencyWindow(100, 20);
    record(window, FAST, 39);
    window.record(SLOW);   // the 40th answer: still recomputed at once
    assertDelayIsAbout(window, SLOW);
  }

  @Test
  void afterTwiceTheWarmUpThePercentileIsRecomputedEverySixteenAnswers() {
    LatencyWindow window = new LatencyWindow(100, 20);
    record(window, FAST, 40);
    window.record(SLOW);   // the 41st answer
    assertDelayIsAbout(window, FAST);
    record(window, FAST, 14);   // the 55th
    assertDelayIsAbout(window, FAST);
    window.record(FAST);   // the 56th: 16 answers after the last recomputation
    assertDelayIsAbout(window, SLOW);
  }

  @Test
  void anAnswerLeavesTheWindowOnceTheOtherHalfHasFilledUpSoTheWindowCoversTheLastThousandToTwoThousand() {
    LatencyWindow window = new LatencyWindow(100, 20);
    window.record(SLOW);   // in the first half
    record(window, FAST, 999);   // the first half is full at the 1 000th answer, recomputed then
    record(window, FAST, 1000);   // the second half: 2 000 answers in all
    assertDelayIsAbout(window, SLOW);
    record(window, FAST, 7);   // 2 007: the last recomputation (1 992) saw 992 in the second half
    assertDelayIsAbout(window, SLOW);
    window.record(FAST);   // 2 008: the second half holds 1 008; the first is emptied for the answers to come
    assertDelayIsAbout(window, FAST);
  }

  @Test
  void latenciesAreKeptFromAMicrosecondToAnHour() {
    LatencyWindow shortest = new LatencyWindow(100, 1);
    shortest.record(10);   // 10 ns: counted as 1 µs
    assertThat(shortest.delayNanos()).isEqualTo(1_000);

    LatencyWindow longest = new LatencyWindow(100, 1);
    longest.record(Duration.ofHours(5).toNanos());   // counted as an hour
    assertDelayIsAbout(longest, Duration.ofHours(1).toNanos());
  }

  @Test
  void thePercentileIsTakenOverTheAnswersInTheWindow() {
    LatencyWindow window = new LatencyWindow(50, 20);
    record(window, FAST, 15);
    record(window, SLOW, 5);
    assertDelayIsAbout(window, FAST);   // the median of 15 fast and 5 slow answers
    record(window, SLOW, 20);
    assertDelayIsAbout(window, SLOW);   // 15 fast, 25 slow
  }

  @Test
  void onlyAPercentilePolicyKeepsALatencyWindow() {
    HedgeRuntime percentile = HedgeRuntime.of(HedgePolicy.builder().delayPercentile(90)
        .meterRegistry(new SimpleMeterRegistry()).build());
    assertThat(percentile.adaptive()).isTrue();
    assertThat(percentile.latency).isNotNull();
    HedgeRuntime fixed = HedgeRuntime.of(HedgePolicy.builder().delay(Duration.ofMillis(100))
        .meterRegistry(new SimpleMeterRegistry()).build());
    assertThat(fixed.adaptive()).isFalse();
    assertThat(fixed.latency).isNull();
  }
}
