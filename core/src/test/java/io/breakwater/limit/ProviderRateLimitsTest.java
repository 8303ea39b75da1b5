package io.breakwater.limit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.limit.ProviderRateLimits.Quota;
import io.breakwater.limit.ProviderRateLimits.Reading;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProviderRateLimitsTest {

  private static final long NOW = Instant.parse("2025-06-01T12:00:00Z").toEpochMilli();

  private static Map<String, List<String>> headers(String... namesAndValues) {
    Map<String, List<String>> h = new LinkedHashMap<>();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      h.put(namesAndValues[i], List.of(namesAndValues[i + 1]));
    }
    return h;
  }

  private static Duration tokenReset(String value) {
    Quota q = ProviderRateLimits.openAi().read(headers("x-ratelimit-reset-tokens", value), NOW).tokens();
    return q == null ? null : q.reset();
  }

  @Test
  void openAiHeadersAreReadAsTheyAreSent() {
    Reading r = ProviderRateLimits.openAi().read(headers(
        "x-ratelimit-limit-requests", "60",
        "x-ratelimit-limit-tokens", "150000",
        "x-ratelimit-remaining-requests", "59",
        "x-ratelimit-remaining-tokens", "149984",
        "x-ratelimit-reset-requests", "1s",
        "x-ratelimit-reset-tokens", "6m0s"), NOW);
    assertThat(r.requests()).isEqualTo(new Quota(60, 59, Duration.ofSeconds(1)));
    assertThat(r.tokens()).isEqualTo(new Quota(150_000, 149_984, Duration.ofMinutes(6)));
    assertThat(r.retryAfter()).isNull();
  }

  @Test
  void anthropicHeadersAreReadAsTheyAreSent() {
    Reading r = ProviderRateLimits.anthropic().read(headers(
        "anthropic-ratelimit-requests-limit", "50",
        "anthropic-ratelimit-requests-remaining", "49",
        "anthropic-ratelimit-requests-reset", "2025-06-01T12:00:01Z",
        "anthropic-ratelimit-tokens-limit", "40000",
        "anthropic-ratelimit-tokens-remaining", "39000",
        "anthropic-ratelimit-tokens-reset", "2025-06-01T12:00:01.500Z",
        "anthropic-ratelimit-input-tokens-limit", "30000",
        "anthropic-ratelimit-input-tokens-remaining", "100",
        "retry-after", "3"), NOW);
    assertThat(r.requests()).isEqualTo(new Quota(50, 49, Duration.ofSeconds(1)));
    assertThat(r.tokens()).as("tokens-* is the most restrictive limit in effect")
        .isEqualTo(new Quota(40_000, 39_000, Duration.ofMillis(1500)));
    assertThat(r.retryAfter()).isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void withoutTheCombinedTokenLimitTheScarcerOfInputAndOutputIsRead() {
    Reading r = ProviderRateLimits.anthropic().read(headers(
        "anthropic-ratelimit-input-tokens-limit", "30000",
        "anthropic-ratelimit-input-tokens-remaining", "20000",
        "anthropic-ratelimit-output-tokens-limit", "8000",
        "anthropic-ratelimit-output-tokens-remaining", "1000",
        "anthropic-ratelimit-output-tokens-reset", "2025-06-01T12:00:30+00:00"), NOW);
    assertThat(r.tokens()).isEqualTo(new Quota(8_000, 1_000, Duration.ofSeconds(30)));
  }

  @Test
  void headerNamesMatchInAnyCaseAndAllReadsEitherProvider() {
    Reading openAi = ProviderRateLimits.all().read(headers("X-RateLimit-Remaining-Tokens", "5"), NOW);
    assertThat(openAi.tokens()).isEqualTo(new Quota(Quota.UNKNOWN, 5, null));
    Reading anthropic = ProviderRateLimits.all().read(headers("Anthropic-RateLimit-Requests-Remaining", "7",
        "Retry-After-Ms", "250"), NOW);
    assertThat(anthropic.requests()).isEqualTo(new Quota(Quota.UNKNOWN, 7, null));
    assertThat(anthropic.retryAfter()).isEqualTo(Duration.ofMillis(250));
    assertThat(ProviderRateLimits.none().read(headers("x-ratelimit-remaining-tokens", "5"), NOW).isEmpty()).isTrue();
    assertThat(ProviderRateLimits.all().read(headers("content-type", "text/plain"), NOW)).isEqualTo(Reading.NONE);
  }

  @Test
  void resetValuesComeAsGoDurationsInstantsOrSeconds() {
    assertThat(tokenReset("6m0s")).isEqualTo(Duration.ofMinutes(6));
    assertThat(tokenReset("1s")).isEqualTo(Duration.ofSeconds(1));
    assertThat(tokenReset("20ms")).isEqualTo(Duration.ofMillis(20));
    assertThat(tokenReset("2m3.5s")).isEqualTo(Duration.ofSeconds(123, 500_000_000));
    assertThat(tokenReset("1h0m0s")).isEqualTo(Duration.ofHours(1));
    assertThat(tokenReset("17.765s")).isEqualTo(Duration.ofMillis(17_765));
    assertThat(tokenReset("250us")).isEqualTo(Duration.ofNanos(250_000));
    assertThat(tokenReset("250µs")).isEqualTo(Duration.ofNanos(250_000));
    assertThat(tokenReset("7ns")).isEqualTo(Duration.ofNanos(7));
    assertThat(tokenReset("0s")).isEqualTo(Duration.ZERO);
    assertThat(tokenReset(".5s")).isEqualTo(Duration.ofMillis(500));
    assertThat(tokenReset("30")).isEqualTo(Duration.ofSeconds(30));
    assertThat(tokenReset("1.5")).isEqualTo(Duration.ofMillis(1500));
    assertThat(tokenReset("2025-06-01T12:00:10Z")).isEqualTo(Duration.ofSeconds(10));
    assertThat(tokenReset("2025-06-01t14:00:10.25+02:00")).isEqualTo(Duration.ofMillis(10_250));
    assertThat(tokenReset("2025-06-01T11:00:00Z")).as("an instant in the past").isEqualTo(Duration.ZERO);
  }

  @Test
  void hostileResetValuesAreIgnoredOrSaturatedNeverWrapped() {
    for (String bad : new String[] {"", "   ", "-1s", "s", "1x", "1.5.5s", "1e9s", "NaN", "Infinity", "1s2",
        "١s", "1 s", "--", "2025-13-45T99:99:99Z", "0x10s", "1" + "0".repeat(64) + "s"}) {
      assertThat(tokenReset(bad)).as("'%s'", bad).isNull();
    }
    Duration hour = Duration.ofHours(1);
    assertThat(tokenReset("99999999999999999999h")).as("saturated, then cut to an hour").isEqualTo(hour);
    assertThat(tokenReset("2562047h47m16.854775807s")).isEqualTo(hour);
    assertThat(tokenReset("9223372036854775807")).isEqualTo(hour);
    assertThat(tokenReset("+999999999-12-31T23:59:59Z")).as("year 999999999 does not parse: no ISO sign")
        .isNull();
    assertThat(tokenReset("9999-12-31T23:59:59Z")).isEqualTo(hour);
    assertThat(tokenReset("0000-01-01T00:00:00Z")).isEqualTo(Duration.ZERO);
    assertThat(tokenReset("9".repeat(60) + "ms")).isEqualTo(hour);
    assertThat(tokenReset("0.000000000001s")).isEqualTo(Duration.ZERO);
  }

  @Test
  void hostileCountsAreIgnoredOrSaturated() {
    Reading r = ProviderRateLimits.openAi().read(headers(
        "x-ratelimit-limit-tokens", "99999999999999999999999",
        "x-ratelimit-remaining-tokens", "-5",
        "x-ratelimit-limit-requests", "1.5",
        "x-ratelimit-remaining-requests", " 12 "), NOW);
    assertThat(r.tokens()).isEqualTo(new Quota(Long.MAX_VALUE, Quota.UNKNOWN, null));
    assertThat(r.requests()).isEqualTo(new Quota(Quota.UNKNOWN, 12, null));
    Reading garbage = ProviderRateLimits.openAi().read(headers("x-ratelimit-remaining-tokens", "lots"), NOW);
    assertThat(garbage.tokens()).as("nothing usable, nothing read").isNull();
  }

  @Test
  void retryAfterComesAsSecondsMillisecondsOrAnHttpDate() {
    ProviderRateLimits reader = ProviderRateLimits.retryAfter();
    assertThat(reader.read(headers("retry-after", "20"), NOW).retryAfter()).isEqualTo(Duration.ofSeconds(20));
    assertThat(reader.read(headers("retry-after-ms", "1500.5", "retry-after", "20"), NOW).retryAfter())
        .isEqualTo(Duration.ofNanos(1_500_500_000));
    assertThat(reader.read(headers("retry-after", "Sun, 01 Jun 2025 12:00:42 GMT"), NOW).retryAfter())
        .isEqualTo(Duration.ofSeconds(42));
    assertThat(reader.read(headers("retry-after", "Sunday, 01-Jun-25 12:00:42 GMT"), NOW).retryAfter())
        .as("RFC 850, as the library's one Retry-After reader accepts").isEqualTo(Duration.ofSeconds(42));
    assertThat(reader.read(headers("retry-after", "Sun Jun  1 12:00:42 2025"), NOW).retryAfter())
        .as("asctime").isEqualTo(Duration.ofSeconds(42));
    assertThat(reader.read(headers("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT"), NOW).retryAfter())
        .isEqualTo(Duration.ofHours(1));
    assertThat(reader.read(headers("retry-after", "-3"), NOW).isEmpty()).isTrue();
    assertThat(reader.read(headers("retry-after", "soon"), NOW).isEmpty()).isTrue();
    assertThat(reader.read(headers("retry-after-ms", "1e3"), NOW).isEmpty()).isTrue();
  }

  @Test
  void orElseFillsWhatTheFirstReaderLeftOut() {
    ProviderRateLimits custom = (h, now) -> new Reading(new Quota(10, 3, null), null, null);
    Reading r = custom.orElse(ProviderRateLimits.openAi()).read(headers("x-ratelimit-remaining-tokens", "5",
        "x-ratelimit-remaining-requests", "9"), NOW);
    assertThat(r.requests()).isEqualTo(new Quota(10, 3, null));
    assertThat(r.tokens()).isEqualTo(new Quota(Quota.UNKNOWN, 5, null));
  }

  @Test
  void readingsRefuseNegativeValues() {
    assertThatThrownBy(() -> new Quota(-2, 0, null)).hasMessageContaining("give zero or more, or Quota.UNKNOWN");
    assertThatThrownBy(() -> new Quota(1, 0, Duration.ofSeconds(-1))).hasMessageContaining("reset is PT-1S");
    assertThatThrownBy(() -> new Reading(null, null, Duration.ofSeconds(-1))).hasMessageContaining("retryAfter");
  }
}
