package io.breakwater.internal;

import java.time.Duration;

/** Short, human-readable durations for error messages: {@code 250ms}, {@code 1.5s}, {@code 2m30s}. */
public final class Durations {

  private Durations() {}

  public static String format(Duration d) {
    if (d.isNegative()) {
      // Duration.ofSeconds(Long.MIN_VALUE).negated() throws: its magnitude is 1 ns short of it, formatted alike
      return "-" + format(d.getSeconds() == Long.MIN_VALUE && d.getNano() == 0
          ? Duration.ofSeconds(Long.MAX_VALUE, 999_999_999) : d.negated());
    }
    long nanos = Saturating.nanos(d);   // toNanos() throws past 292 years, which format in hours below
    if (nanos < 1_000L) {
      return nanos + "ns";
    }
    if (nanos < 1_000_000L) {
      return trim(nanos / 1_000.0) + "µs";
    }
    if (nanos < 1_000_000_000L) {
      return trim(nanos / 1_000_000.0) + "ms";
    }
    long seconds = d.getSeconds();
    if (seconds < 60) {
      return trim(nanos / 1_000_000_000.0) + "s";
    }
    long minutes = seconds / 60;
    long restSeconds = seconds % 60;
    if (minutes < 60) {
      return minutes + "m" + (restSeconds == 0 ? "" : restSeconds + "s");
    }
    long restMinutes = minutes % 60;
    return (minutes / 60) + "h" + (restMinutes == 0 ? "" : restMinutes + "m");
  }

  /** At most three decimals, trailing zeros dropped. */
  private static String trim(double value) {
    String s = String.format(java.util.Locale.ROOT, "%.3f", value);
    s = s.replaceAll("0+$", "");
    return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
  }
}
