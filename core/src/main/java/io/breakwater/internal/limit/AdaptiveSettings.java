package io.breakwater.internal.limit;

/** The bounds of an adaptive concurrency limit, validated. */
public record AdaptiveSettings(int initial, int min, int max) {

  public AdaptiveSettings {
    if (min < 1) {
      throw new IllegalArgumentException("Adaptive limit min is " + min + ": give 1 or more");
    }
    if (max < min) {
      throw new IllegalArgumentException("Adaptive limit max is " + max + ", below its min " + min
          + ": give a max of at least " + min);
    }
    if (initial < min || initial > max) {
      throw new IllegalArgumentException("Adaptive limit initial is " + initial + ": give a value from min " + min
          + " to max " + max);
    }
  }
}
