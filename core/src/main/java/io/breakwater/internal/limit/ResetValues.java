package io.breakwater.internal.limit;

import io.breakwater.internal.Saturating;
import io.breakwater.internal.retry.RetryAfter;
import java.time.DateTimeException;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Parses the values of rate-limit headers with saturating arithmetic: counts, reset values (Go durations such as
 * {@code 6m0s}, {@code 20ms} or {@code 1h2m3.5s}; RFC 3339 instants; seconds) and {@code Retry-After} (seconds or an
 * HTTP date). A value that does not parse, is negative or is longer than {@value #MAX_LENGTH} characters gives
 * {@link #INVALID}; a duration too large for a long saturates at {@link Long#MAX_VALUE} nanoseconds.
 */
public final class ResetValues {

  /** What a value that cannot be used parses to. */
  public static final long INVALID = -1;

  /** The longest value read. */
  public static final int MAX_LENGTH = 64;

  private static final long NANOS_PER_SECOND = 1_000_000_000L;

  private ResetValues() {}

  /** A count: ASCII digits only, saturated at {@link Long#MAX_VALUE}; {@link #INVALID} otherwise. */
  public static long count(@Nullable String value) {
    if (value == null) {
      return INVALID;
    }
    String v = value.trim();
    if (v.isEmpty() || v.length() > MAX_LENGTH) {
      return INVALID;
    }
    long n = 0;
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c < '0' || c > '9') {
        return INVALID;
      }
      n = n > (Long.MAX_VALUE - (c - '0')) / 10 ? Long.MAX_VALUE : n * 10 + (c - '0');
    }
    return n;
  }

  /**
   * A reset value in nanoseconds from now: a Go duration, an RFC 3339 instant (converted with
   * {@code nowEpochMillis}, 0 when past) or seconds; {@link #INVALID} otherwise.
   */
  public static long resetNanos(@Nullable String value, long nowEpochMillis) {
    if (value == null) {
      return INVALID;
    }
    String v = value.trim();
    if (v.isEmpty() || v.length() > MAX_LENGTH) {
      return INVALID;
    }
    if (isDecimal(v)) {
      return decimalNanos(v, 0, v.length(), NANOS_PER_SECOND);
    }
    if (v.length() >= 20 && v.charAt(4) == '-' && (v.charAt(10) == 'T' || v.charAt(10) == 't')) {
      return instantNanos(v, nowEpochMillis);
    }
    return goDurationNanos(v);
  }

  /**
   * A {@code Retry-After} value in nanoseconds: seconds or an HTTP date (any of RFC 9110's three forms), read by the
   * library's one reader of retry hints, {@link RetryAfter}; {@link #INVALID} otherwise.
   */
  public static long retryAfterNanos(@Nullable String value, long nowEpochMillis) {
    if (value == null || value.length() > MAX_LENGTH) {
      return INVALID;
    }
    long nanos = RetryAfter.retryAfterNanos(value, nowEpochMillis);
    return nanos == RetryAfter.NONE ? INVALID : nanos;
  }

  /** A {@code retry-after-ms} value (milliseconds, possibly fractional) in nanoseconds; {@link #INVALID} otherwise. */
  public static long retryAfterMillisNanos(@Nullable String value) {
    if (value == null) {
      return INVALID;
    }
    String v = value.trim();
    if (v.isEmpty() || v.length() > MAX_LENGTH || !isDecimal(v)) {
      return INVALID;
    }
    return decimalNanos(v, 0, v.length(), 1_000_000L);
  }

  private static long instantNanos(String v, long nowEpochMillis) {
    try {
      long at = OffsetDateTime.parse(v.toUpperCase(Locale.ROOT), DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant()
          .toEpochMilli();
      return millisToNanos(at - nowEpochMillis);
    } catch (ArithmeticException farFuture) {
      return Long.MAX_VALUE;
    } catch (DateTimeException e) {
      return INVALID;
    }
  }

  /** A difference of epoch milliseconds as nanoseconds from now: 0 when past, saturated when far. */
  private static long millisToNanos(long millis) {
    if (millis <= 0) {
      return 0;
    }
    return Saturating.multiply(millis, 1_000_000L);
  }

  /** Digits with at most one dot, and at least one digit. */
  private static boolean isDecimal(String v) {
    boolean digit = false;
    boolean dot = false;
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c >= '0' && c <= '9') {
        digit = true;
      } else if (c == '.' && !dot) {
        dot = true;
      } else {
        return false;
      }
    }
    return digit;
  }

  /** {@code v[from, to)}, a decimal number, times {@code unitNanos}, saturated; fractions below 1 ns dropped. */
  private static long decimalNanos(String v, int from, int to, long unitNanos) {
    long whole = 0;
    int i = from;
    for (; i < to && v.charAt(i) != '.'; i++) {
      int d = v.charAt(i) - '0';
      whole = whole > (Long.MAX_VALUE - d) / 10 ? Long.MAX_VALUE : whole * 10 + d;
    }
    long fraction = 0;
    long scale = 1;
    for (i++; i < to; i++) {
      if (scale < 1_000_000_000_000L) {
        fraction = fraction * 10 + (v.charAt(i) - '0');
        scale *= 10;
      }
    }
    long nanos = whole > Long.MAX_VALUE / unitNanos ? Long.MAX_VALUE : whole * unitNanos;
    // fraction < scale ≤ 10^12 and unitNanos ≤ 3.6·10^12: compute in double, below 2^53 where it matters
    long part = (long) ((double) fraction / scale * unitNanos);
    return nanos > Long.MAX_VALUE - part ? Long.MAX_VALUE : nanos + part;
  }

  /** A Go duration ({@code time.Duration.String()}): one or more decimal numbers, each with a unit. */
  private static long goDurationNanos(String v) {
    long total = 0;
    int i = 0;
    int n = v.length();
    while (i < n) {
      int start = i;
      while (i < n && (v.charAt(i) >= '0' && v.charAt(i) <= '9' || v.charAt(i) == '.')) {
        i++;
      }
      if (i == start || !isDecimal(v.substring(start, i))) {
        return INVALID;
      }
      int numberEnd = i;
      while (i < n && !(v.charAt(i) >= '0' && v.charAt(i) <= '9') && v.charAt(i) != '.') {
        i++;
      }
      long unit = unitNanos(v.substring(numberEnd, i));
      if (unit == INVALID) {
        return INVALID;
      }
      long part = decimalNanos(v, start, numberEnd, unit);
      total = total > Long.MAX_VALUE - part ? Long.MAX_VALUE : total + part;
    }
    return total;
  }

  private static long unitNanos(String unit) {
    return switch (unit) {
      case "ns" -> 1L;
      case "us", "\u00b5s", "\u03bcs" -> 1_000L;
      case "ms" -> 1_000_000L;
      case "s" -> NANOS_PER_SECOND;
      case "m" -> 60 * NANOS_PER_SECOND;
      case "h" -> 3600 * NANOS_PER_SECOND;
      default -> INVALID;
    };
  }
}
