package io.breakwater.internal.retry;

import io.breakwater.failure.HttpStatusException;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import reactor.core.Exceptions;
import reactor.util.annotation.Nullable;

/** Reads the retry hints of an HTTP answer: {@code retry-after-ms}, {@code Retry-After} and {@code x-should-retry}. */
final class RetryAfter {

  /** No usable hint. */
  static final long NONE = -1L;

  private RetryAfter() {}

  /** The {@link HttpStatusException} that {@code failure} is or wraps (a few causes deep), or {@code null}. */
  @Nullable
  static HttpStatusException httpOf(Throwable failure) {
    Throwable current = Exceptions.unwrap(failure);
    for (int depth = 0; current != null && depth < 8; depth++) {
      if (current instanceof HttpStatusException h) {
        return h;
      }
      Throwable cause = current.getCause();
      current = cause == current ? null : cause;
    }
    return null;
  }

  /** Whether the answer says {@code x-should-retry: false}. */
  static boolean forbidsRetry(HttpStatusException http) {
    return http.header("x-should-retry").map(v -> v.trim().equalsIgnoreCase("false")).orElse(false);
  }

  /**
   * The wait the answer asks for in nanoseconds ({@code retry-after-ms} first, then {@code Retry-After} as seconds
   * or an HTTP date converted with {@code nowMillis}), never negative; {@link #NONE} without a valid header.
   */
  static long delayNanos(HttpStatusException http, long nowMillis) {
    String ms = http.header("retry-after-ms").orElse(null);
    if (ms != null) {
      try {
        double value = Double.parseDouble(ms.trim());
        if (value >= 0 && !Double.isInfinite(value)) {
          return (long) (value * 1_000_000.0);
        }
      } catch (NumberFormatException ignored) {
        // fall through to Retry-After
      }
    }
    String after = http.header("retry-after").orElse(null);
    if (after == null) {
      return NONE;
    }
    String value = after.trim();
    try {
      double seconds = Double.parseDouble(value);
      return seconds >= 0 && !Double.isInfinite(seconds) ? (long) (seconds * 1_000_000_000.0) : NONE;
    } catch (NumberFormatException notSeconds) {
      try {
        long at = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
        return Math.max(0L, at - nowMillis) * 1_000_000L;
      } catch (DateTimeParseException notADate) {
        return NONE;
      }
    }
  }
}
