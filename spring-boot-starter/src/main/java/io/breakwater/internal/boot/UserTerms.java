package io.breakwater.internal.boot;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A core builder's message in the terms of {@code application.yml}: the durations it quotes in ISO-8601
 * ({@code PT-5S}) are written as the user writes them ({@code -5s}).
 */
final class UserTerms {

  private static final Pattern ISO_DURATION = Pattern.compile("(?<![A-Za-z0-9])-?PT-?[0-9][-0-9HMS.]*");

  private static final long[] UNITS = {86_400_000_000_000L, 3_600_000_000_000L, 60_000_000_000L, 1_000_000_000L,
      1_000_000L, 1_000L, 1L};
  private static final String[] SUFFIXES = {"d", "h", "m", "s", "ms", "us", "ns"};

  private UserTerms() {}

  /** {@code message} with each ISO-8601 duration written as in {@code application.yml}. */
  static String of(String message) {
    Matcher m = ISO_DURATION.matcher(message);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String replacement;
      try {
        replacement = duration(Duration.parse(m.group()));
      } catch (DateTimeParseException | ArithmeticException e) {
        replacement = m.group();
      }
      m.appendReplacement(out, Matcher.quoteReplacement(replacement));
    }
    m.appendTail(out);
    return out.toString();
  }

  /** {@code d} in the largest of Boot's units that holds it exactly: {@code -5s}, {@code 1500ms}, {@code 2h}. */
  static String duration(Duration d) {
    if (d.isZero()) {
      return "0s";
    }
    if (d.getSeconds() == Long.MIN_VALUE) {
      return "-" + Long.MAX_VALUE + "s";   // the most negative Duration has no positive counterpart
    }
    Duration magnitude = d.abs();
    String sign = d.isNegative() ? "-" : "";
    long seconds = magnitude.getSeconds();
    if (seconds >= Long.MAX_VALUE / 1_000_000_000L) {
      return sign + seconds + "s";   // beyond nanos in a long: whole seconds are as close as Boot's units get
    }
    long nanos = seconds * 1_000_000_000L + magnitude.getNano();   // time-arithmetic: seconds checked just above
    for (int i = 0; i < UNITS.length; i++) {
      if (nanos % UNITS[i] == 0) {
        return sign + nanos / UNITS[i] + SUFFIXES[i];
      }
    }
    return sign + nanos + "ns";
  }
}
