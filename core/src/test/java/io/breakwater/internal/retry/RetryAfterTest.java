package io.breakwater.internal.retry;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.HttpStatusException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import reactor.core.Exceptions;

/** The shared Retry-After parser: every header value becomes a wait within [0, cap], or no hint at all. */
class RetryAfterTest {

  static final long CAP = Duration.ofSeconds(60).toNanos();
  /** 2026-01-01T00:00:00Z. */
  static final long NOW = Instant.parse("2026-01-01T00:00:00Z").toEpochMilli();

  static HttpStatusException answer(String... headers) {
    Map<String, List<String>> map = new LinkedHashMap<>();
    for (int i = 0; i < headers.length; i += 2) {
      map.put(headers[i], List.of(headers[i + 1]));
    }
    return new HttpStatusException(429, map);
  }

  static long waitOf(String... headers) {
    return RetryAfter.delayNanos(answer(headers), NOW, CAP);
  }

  @Test
  void secondsAndMillisecondsAreRead() {
    assertThat(waitOf("Retry-After", "7")).isEqualTo(Duration.ofSeconds(7).toNanos());
    assertThat(waitOf("Retry-After", " 1.5 ")).isEqualTo(Duration.ofMillis(1500).toNanos());
    assertThat(waitOf("retry-after-ms", "250")).isEqualTo(Duration.ofMillis(250).toNanos());
    assertThat(waitOf("retry-after-ms", "0.5")).isEqualTo(500_000L);
    assertThat(waitOf("Retry-After", "0")).isZero();
    assertThat(waitOf("retry-after-ms", "1500", "Retry-After", "9")).isEqualTo(Duration.ofMillis(1500).toNanos());
  }

  @Test
  void hugeNumbersMeanTheCapNeverAnOverflow() {
    assertThat(waitOf("Retry-After", "10000000000")).isEqualTo(CAP);
    assertThat(waitOf("Retry-After", "9223372036854775807")).isEqualTo(CAP);
    assertThat(waitOf("Retry-After", "99999999999999999999999999999999999999")).isEqualTo(CAP);
    assertThat(waitOf("retry-after-ms", "9223372036854775807")).isEqualTo(CAP);
    assertThat(waitOf("retry-after-ms", "18446744073709551616.999")).isEqualTo(CAP);
    assertThat(RetryAfter.delayNanos(answer("Retry-After", "10000000000"), NOW, Long.MAX_VALUE))
        .isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void httpDatesInEveryFormRecipientsMustAcceptAreReadAgainstTheClock() {
    assertThat(waitOf("Retry-After", "Thu, 01 Jan 2026 00:00:12 GMT")).isEqualTo(Duration.ofSeconds(12).toNanos());
    assertThat(waitOf("Retry-After", "Thursday, 01-Jan-26 00:00:12 GMT")).isEqualTo(Duration.ofSeconds(12).toNanos());
    assertThat(waitOf("Retry-After", "Thu Jan  1 00:00:12 2026")).isEqualTo(Duration.ofSeconds(12).toNanos());
  }

  @Test
  void aFarFutureDateMeansTheCap() {
    assertThat(waitOf("Retry-After", "Thu, 1 Jan 2263 00:00:00 GMT")).isEqualTo(CAP);
    assertThat(waitOf("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT")).isEqualTo(CAP);
    assertThat(RetryAfter.delayNanos(answer("Retry-After", "Thu, 1 Jan 2263 00:00:00 GMT"), 0L, Long.MAX_VALUE))
        .isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void aDateInThePastMeansNoWait() {
    assertThat(waitOf("Retry-After", "Thu, 01 Jan 1970 00:00:00 GMT")).isZero();
    assertThat(waitOf("Retry-After", "Sunday, 06-Nov-94 08:49:37 GMT")).isZero();
  }

  @Test
  void negativeEmptyAndMalformedValuesAreNoHint() {
    for (String bad : List.of("-1", "-0.5", "", "  ", "soon", "1e3", "0x10", "+5", "1.", ".", "5 s", "NaN",
        "Infinity", "1,5", "Thu, 32 Jan 2026 00:00:00 GMT", "Mon, 01 Jan 2026 00:00:00 GMT", "\u0000")) {
      assertThat(waitOf("Retry-After", bad)).as("Retry-After: '%s'", bad).isEqualTo(RetryAfter.NONE);
      assertThat(waitOf("retry-after-ms", bad)).as("retry-after-ms: '%s'", bad).isEqualTo(RetryAfter.NONE);
    }
    assertThat(waitOf()).isEqualTo(RetryAfter.NONE);
  }

  @Test
  void aMalformedMillisecondHintFallsBackToRetryAfter() {
    assertThat(waitOf("retry-after-ms", "-5", "Retry-After", "3")).isEqualTo(Duration.ofSeconds(3).toNanos());
  }

  @Test
  void randomDigitStringsAlwaysGiveAWaitWithinTheCap() {
    SplittableRandom random = new SplittableRandom(0x5A7L);
    for (int i = 0; i < 10_000; i++) {
      StringBuilder digits = new StringBuilder();
      int length = 1 + random.nextInt(40);
      for (int d = 0; d < length; d++) {
        digits.append((char) ('0' + random.nextInt(10)));
      }
      if (random.nextBoolean()) {
        digits.insert(1 + random.nextInt(length), '.').append('5');
      }
      long cap = random.nextLong(Long.MAX_VALUE);
      for (String header : List.of("Retry-After", "retry-after-ms")) {
        long wait = RetryAfter.delayNanos(answer(header, digits.toString()), NOW, cap);
        assertThat(wait).as("%s: %s, cap %d", header, digits, cap).isBetween(0L, cap);
      }
    }
  }

  @Test
  void theAnswerIsFoundInsideWrappersAndCauses() {
    HttpStatusException http = answer("Retry-After", "2");
    Throwable wrapped = Exceptions.propagate(new IllegalStateException("call failed", http));
    assertThat(RetryAfter.hintNanos(wrapped, NOW, CAP)).isEqualTo(Duration.ofSeconds(2).toNanos());
    assertThat(RetryAfter.hintNanos(new IllegalStateException("no answer"), NOW, CAP)).isEqualTo(RetryAfter.NONE);
  }

  @Test
  void aCompositeWaitsForItsLongestHintAndAnyPartMayForbidTheRetry() {
    Throwable composite = Exceptions.multiple(answer("Retry-After", "2"), new IllegalStateException("other"),
        answer("retry-after-ms", "4500"));
    assertThat(RetryAfter.hintNanos(composite, NOW, CAP)).isEqualTo(Duration.ofMillis(4500).toNanos());
    assertThat(RetryAfter.forbidsRetry(composite)).isFalse();
    assertThat(RetryAfter.forbidsRetry(Exceptions.multiple(answer("Retry-After", "2"),
        answer("x-should-retry", " FALSE ")))).isTrue();
  }
}
