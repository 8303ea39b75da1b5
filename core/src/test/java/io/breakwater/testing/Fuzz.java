package io.breakwater.testing;

import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Sizes and seeds of the seeded-random fuzz tests ({@code *FuzzTest}). The normal test command runs each with its
 * default number of cases and a fixed seed; the {@code fuzz} Maven profile ({@code mvn -pl core -Pfuzz test})
 * multiplies the cases and draws a random seed. Every failure message names the seed and the case, so that
 * {@code -Dbreakwater.fuzz.seed=<seed>} replays it.
 *
 * <ul>
 *   <li>{@code breakwater.fuzz.scale}: multiplies every fuzz test's number of cases (default 1);</li>
 *   <li>{@code breakwater.fuzz.seed}: the seed (a number, or {@code random}); default: each test's fixed seed.</li>
 * </ul>
 */
public final class Fuzz {

  public static final String SCALE = "breakwater.fuzz.scale";
  public static final String SEED = "breakwater.fuzz.seed";

  private Fuzz() {}

  /** {@code defaultCases} times the scale. */
  public static int cases(int defaultCases) {
    int scale = Integer.getInteger(SCALE, 1);
    if (scale < 1) {
      throw new IllegalArgumentException(SCALE + " is " + scale + ": give a positive multiplier");
    }
    return Math.multiplyExact(defaultCases, scale);
  }

  /** The seed asked for, a random one for {@code random}, else {@code defaultSeed}. */
  public static long seed(long defaultSeed) {
    String value = System.getProperty(SEED, "").trim();
    if (value.isEmpty()) {
      return defaultSeed;
    }
    if (value.equals("random")) {
      return ThreadLocalRandom.current().nextLong();
    }
    return Long.decode(value);
  }

  /** The random source of case {@code index} of a run with {@code seed}: cases are independent of each other. */
  public static SplittableRandom random(long seed, int index) {
    return new SplittableRandom(seed ^ (index * 0x9E3779B97F4A7C15L));
  }

  /** How to replay case {@code index} of a run with {@code seed}. */
  public static String replay(long seed, int index) {
    return "seed " + seed + ", case " + index + " (replay with -D" + SEED + "=" + seed + ")";
  }
}
