package io.breakwater.internal;

import java.time.Duration;

/** Short, human-readable durations for error messages: {@code 250ms}, {@code 1.5s}, {@code 2m30s}. */
public final class Durations {

  private Durations() {}

  public static String format(Duration d) {
    if (d.isNegative()) {
      return "-" + format(d.negated());
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
