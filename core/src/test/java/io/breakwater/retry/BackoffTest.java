package io.breakwater.retry;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Seeded statistical checks that each backoff follows its formula. */
class BackoffTest {

  private static final long SEED = 20261130L;
  private static final int SAMPLES = 20_000;
  private static final long MS = 1_000_000L;
  private static final Duration BASE = Duration.ofMillis(100);
  private static final Duration CAP = Duration.ofSeconds(2);

  /** Asserts that samples are uniform on [low, high]: every decile holds about a tenth of them. */
  private static void assertUniform(long[] samples, long low, long high, String what) {
    int[] deciles = new int[10];
    for (long s : samples) {
      if (s < low || s > high) {
        org.assertj.core.api.Assertions.fail("%s gave %d ns, outside [%d, %d] (seed %d)", what, s, low, high, SEED);
      }
      int d = high == low ? 0 : (int) Math.min(9, (s - low) * 10 / (high - low));
      deciles[d]++;
    }
    for (int d = 0; d < 10; d++) {
      assertThat(deciles[d] / (double) samples.length).as("%s decile %d (seed %d)", what, d, SEED)
          .isBetween(0.085, 0.115);
    }
  }

  private static long[] sample(Backoff backoff, int n, long previous, SplittableRandom random) {
    long[] samples = new long[SAMPLES];
    for (int i = 0; i < SAMPLES; i++) {
      samples[i] = backoff.delayNanos(n, previous, random);
    }
    return samples;
  }

  @Test
  void fullJitterIsUniformFromZeroToTheCappedExponential() {
    SplittableRandom random = new SplittableRandom(SEED);
    Backoff backoff = Backoff.fullJitter(BASE, CAP);
    for (int n = 0; n <= 6; n++) {
      long e = Math.min(2_000 * MS, (100 * MS) << n);
      assertUniform(sample(backoff, n, 0, random), 0, e, "fullJitter n=" + n);
    }
  }

  @Test
  void equalJitterIsUniformOverTheUpperHalf() {
    SplittableRandom random = new SplittableRandom(SEED);
    Backoff backoff = Backoff.equalJitter(BASE, CAP);
    for (int n = 0; n <= 6; n++) {
      long e = Math.min(2_000 * MS, (100 * MS) << n);
      assertUniform(sample(backoff, n, 0, random), e / 2, e, "equalJitter n=" + n);
    }
  }

  @Test
  void decorrelatedJitterIsUniformFromBaseToThreeTimesThePreviousDelay() {
    SplittableRandom random = new SplittableRandom(SEED);
    Backoff backoff = Backoff.decorrelatedJitter(BASE, CAP);
    assertUniform(sample(backoff, 0, 0, random), 100 * MS, 300 * MS, "first retry: uniform(base, base·3)");
    assertUniform(sample(backoff, 3, 500 * MS, random), 100 * MS, 1_500 * MS, "previous 500 ms");
    // previous 1 s: uniform(100 ms, 3 s) capped at 2 s, so (3 − 2) / (3 − 0.1) of the samples sit at the cap
    long[] capped = sample(backoff, 4, 1_000 * MS, random);
    long atCap = java.util.Arrays.stream(capped).filter(s -> s == 2_000 * MS).count();
    assertThat(java.util.Arrays.stream(capped).max().getAsLong()).isEqualTo(2_000 * MS);
    assertThat(atCap / (double) SAMPLES).as("share at the cap (seed %d)", SEED).isBetween(0.32, 0.37);
  }

  @Test
  void exponentialSpreadsAroundBaseTimesTwoToTheN() {
    SplittableRandom random = new SplittableRandom(SEED);
    Backoff backoff = Backoff.exponential(BASE, Duration.ofSeconds(10), 0.2);
    for (int n = 0; n <= 4; n++) {
      long c = (100 * MS) << n;
      assertUniform(sample(backoff, n, 0, random), (long) (c * 0.8), (long) (c * 1.2), "exponential n=" + n);
    }
  }

  @Test
  void exponentialJitterStaysSpreadInsideTheCapInsteadOfCollapsingOntoIt() {
    SplittableRandom random = new SplittableRandom(SEED);
    Backoff backoff = Backoff.exponential(BASE, CAP, 0.2);
    long centre = (long) (2_000 * MS / 1.2);
    long[] samples = sample(backoff, 10, 0, random);
    assertUniform(samples, (long) (centre * 0.8), 2_000 * MS, "exponential at the cap");
  }

  @Test
  void fixedIsTheSameEveryTime() {
    SplittableRandom random = new SplittableRandom(SEED);
    Backoff backoff = Backoff.fixed(Duration.ofMillis(500));
    for (int n = 0; n < 10; n++) {
      assertThat(backoff.delayNanos(n, 123, random)).isEqualTo(500 * MS);
    }
  }

  @Test
  void everyShapeStaysWithinItsCap() {
    SplittableRandom cases = new SplittableRandom(SEED);
    for (int i = 0; i < 50_000; i++) {
      long baseMs = cases.nextLong(0, 5_000);
      long capMs = baseMs + cases.nextLong(0, 60_000);
      Duration base = Duration.ofMillis(baseMs);
      Duration cap = Duration.ofMillis(capMs);
      Backoff[] shapes = {Backoff.fullJitter(base, cap), Backoff.equalJitter(base, cap),
          Backoff.decorrelatedJitter(base, cap), Backoff.exponential(base, cap, cases.nextDouble())};
      int n = cases.nextInt(0, 80);
      long previous = cases.nextLong(0, Long.MAX_VALUE);
      for (Backoff b : shapes) {
        long d = b.delayNanos(n, previous, cases);
        if (d < 0 || d > capMs * MS) {
          org.assertj.core.api.Assertions.fail("%s n=%d previous=%d gave %d ns (case %d, seed %d)", b, n, previous,
              d, i, SEED);
        }
      }
    }
  }

  @Test
  void withBaseKeepsTheShapeAndRaisesTheCapToTheBase() {
    Backoff backoff = Backoff.fullJitter(BASE, CAP).withBase(Duration.ofSeconds(5));
    assertThat(backoff.base()).isEqualTo(Duration.ofSeconds(5));
    assertThat(backoff.cap()).isEqualTo(Duration.ofSeconds(5));
    assertThat(backoff.toString()).isEqualTo("fullJitter(PT5S, PT5S)");
  }

  @Test
  void durationsBeyondWhatNanosecondsHoldSaturateInsteadOfOverflowing() {
    Backoff huge = Backoff.fullJitter(Duration.ofMillis(200), Duration.ofDays(365L * 1_000_000));
    assertThat(huge.cap()).isEqualTo(Duration.ofNanos(Long.MAX_VALUE));
    SplittableRandom random = new SplittableRandom(7);
    for (int n = 0; n < 100; n++) {
      assertThat(huge.delayNanos(n, 0, random)).isBetween(0L, Long.MAX_VALUE);
    }
    assertThat(Backoff.fixed(Duration.ofSeconds(Long.MAX_VALUE)).delayNanos(0, 0, random)).isEqualTo(Long.MAX_VALUE);
    assertThat(Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(Long.MAX_VALUE), 0.5)
        .withBase(Duration.ofSeconds(Long.MAX_VALUE)).delayNanos(3, 0, random)).isBetween(0L, Long.MAX_VALUE);
  }

  @Test
  void backoffsThatGiveTheSameDelaysAreEqual() {
    Backoff inline = Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2));
    assertThat(inline).isEqualTo(Backoff.fullJitter(Duration.ofNanos(200 * MS), Duration.ofMillis(2_000)))
        .hasSameHashCodeAs(Backoff.fullJitter(Duration.ofNanos(200 * MS), Duration.ofMillis(2_000)));
    assertThat(inline).isNotEqualTo(Backoff.equalJitter(Duration.ofMillis(200), Duration.ofSeconds(2)))
        .isNotEqualTo(Backoff.fullJitter(Duration.ofMillis(201), Duration.ofSeconds(2)))
        .isNotEqualTo(Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(3)));
    assertThat(Backoff.exponential(BASE, CAP, 0.2)).isEqualTo(Backoff.exponential(BASE, CAP, 0.2))
        .isNotEqualTo(Backoff.exponential(BASE, CAP, 0.3));
    assertThat(Backoff.fixed(BASE)).isEqualTo(Backoff.fixed(BASE)).isNotEqualTo(Backoff.fullJitter(BASE, BASE));
  }
}
