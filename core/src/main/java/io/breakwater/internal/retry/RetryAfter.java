package io.breakwater.internal.retry;

import io.breakwater.failure.HttpStatusException;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.failure.CompositeFailures;
import java.time.DateTimeException;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.TextStyle;
import java.util.Locale;

/**
 * The one reader of an HTTP answer's retry hints, shared by {@code retryWithBudget}, the agent's cool-down and
 * (through {@code retryWithBudget}) the LLM client: {@code retry-after-ms}, {@code Retry-After} and
 * {@code x-should-retry}.
 *
 * <p>Every number is parsed with saturating arithmetic and every result is clamped to the caller's cap, so a hostile
 * or mistaken header can only make the wait as long as the cap, never negative, never an overflow:
 * {@code Retry-After: 10000000000}, a date in the year 2263 and {@code retry-after-ms: 1e400} all mean "the cap".
 * A negative, empty or malformed value is no hint at all.
 *
 * <ul>
 *   <li>{@code retry-after-ms}: milliseconds, digits with an optional fraction ({@code 1500}, {@code 12.5});</li>
 *   <li>{@code Retry-After}: seconds, digits with an optional fraction, or an HTTP date in any of the three forms
 *       RFC 9110 §5.6.7 makes recipients accept (IMF-fixdate, RFC 850, asctime), read against the caller's clock; a
 *       date in the past means no wait.</li>
 * </ul>
 */
public final class RetryAfter {

  /** No usable hint. */
  public static final long NONE = -1L;

  private static final DateTimeFormatter RFC_850 =
      DateTimeFormatter.ofPattern("dd-MMM-uu HH:mm:ss 'GMT'", Locale.US);
  private static final DateTimeFormatter ASCTIME =
      DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss uuuu", Locale.US);

  private RetryAfter() {}

  /**
   * Whether an HTTP answer in {@code failure} (itself, a cause, or a part of a composite) says
   * {@code x-should-retry: false}.
   */
  public static boolean forbidsRetry(Throwable failure) {
    return CompositeFailures.any(failure, t -> t instanceof HttpStatusException http
        && http.header("x-should-retry").map(v -> v.trim().equalsIgnoreCase("false")).orElse(false));
  }

  /**
   * The wait the HTTP answers in {@code failure} (itself, its causes, the parts of a composite) ask for, the longest
   * if several do, in nanoseconds within [0, {@code capNanos}]; {@link #NONE} when none gives a valid hint.
   */
  public static long hintNanos(Throwable failure, long nowMillis, long capNanos) {
    long[] longest = {NONE};
    CompositeFailures.any(failure, t -> {
      if (t instanceof HttpStatusException http) {
        longest[0] = Math.max(longest[0], delayNanos(http, nowMillis, capNanos));
      }
      return false;
    });
    return longest[0];
  }

  /**
   * The wait the answer asks for, in nanoseconds within [0, {@code capNanos}] ({@code retry-after-ms} first, then
   * {@code Retry-After}); {@link #NONE} without a valid header.
   *
   * @param nowMillis the caller's clock in epoch milliseconds, against which an HTTP date is read
   * @param capNanos the longest wait honoured; longer hints are shortened to it
   */
  public static long delayNanos(HttpStatusException http, long nowMillis, long capNanos) {
    long nanos = http.header("retry-after-ms").map(v -> decimalNanos(v, 1_000_000L)).orElse(NONE);
    if (nanos == NONE) {
      nanos = http.header("retry-after").map(v -> retryAfterNanos(v, nowMillis)).orElse(NONE);
    }
    return nanos == NONE ? NONE : Math.min(nanos, Math.max(0L, capNanos));
  }

  /** A {@code Retry-After} value, seconds or an HTTP date, as a wait from {@code nowMillis}; {@link #NONE} if invalid. */
  public static long retryAfterNanos(String value, long nowMillis) {
    long seconds = decimalNanos(value, 1_000_000_000L);
    if (seconds != NONE) {
      return seconds;
    }
    long at = epochMillisOfHttpDate(value.trim(), nowMillis);
    if (at == NONE) {
      return NONE;
    }
    return at <= nowMillis ? 0L : Saturating.multiply(Saturating.add(at, -nowMillis), 1_000_000L);
  }

  /**
   * {@code value} (digits, optionally a point and more digits, surrounding blanks allowed) times {@code unitNanos},
   * saturated at {@code Long.MAX_VALUE}; {@link #NONE} for anything else (signs, exponents, blanks inside).
   */
  static long decimalNanos(String value, long unitNanos) {
    int i = 0;
    int end = value.length();
    while (i < end && isBlank(value.charAt(i))) {
      i++;
    }
    while (end > i && isBlank(value.charAt(end - 1))) {
      end--;
    }
    long whole = 0;
    int digits = 0;
    while (i < end && isDigit(value.charAt(i))) {
      whole = Saturating.add(Saturating.multiply(whole, 10), value.charAt(i) - '0');
      i++;
      digits++;
    }
    long nanos = Saturating.multiply(whole, unitNanos);
    if (i < end && value.charAt(i) == '.') {
      i++;
      long scale = unitNanos;
      int fractionDigits = 0;
      while (i < end && isDigit(value.charAt(i))) {
        scale /= 10;
        nanos = Saturating.add(nanos, (value.charAt(i) - '0') * scale);
        i++;
        fractionDigits++;
      }
      digits += fractionDigits;
      if (fractionDigits == 0) {
        return NONE;
      }
    }
    return digits == 0 || i != end ? NONE : nanos;
  }

  /** The instant of an HTTP date in epoch milliseconds, {@link #NONE} if {@code value} is not one. */
  private static long epochMillisOfHttpDate(String value, long nowMillis) {
    try {
      return DateTimeFormatter.RFC_1123_DATE_TIME.parse(value, ZonedDateTime::from).toInstant()
          .toEpochMilli();
    } catch (DateTimeException notImfFixdate) {
      // try the obsolete forms
    }
    int comma = value.indexOf(", ");
    if (comma > 0) {
      try {
        // RFC 850: the weekday is checked after the century is known, so parse the rest first
        LocalDateTime at = LocalDateTime.parse(value.substring(comma + 2), RFC_850);
        // RFC 9110: a two-digit year that looks more than 50 years in the future is in the past century
        LocalDateTime now = LocalDateTime.ofEpochSecond(Math.floorDiv(nowMillis, 1000L), 0, ZoneOffset.UTC);
        if (at.isAfter(now.plusYears(50))) {
          at = at.minusYears(100);
        }
        String weekday = at.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.US);
        return weekday.equals(value.substring(0, comma)) ? at.toInstant(ZoneOffset.UTC).toEpochMilli() : NONE;
      } catch (DateTimeException notRfc850) {
        // try asctime
      }
    }
    try {
      return LocalDateTime.parse(value, ASCTIME).toInstant(ZoneOffset.UTC).toEpochMilli();
    } catch (DateTimeException notAnHttpDate) {
      return NONE;
    }
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private static boolean isBlank(char c) {
    return c == ' ' || c == '\t';
  }
}
