package io.breakwater.internal.limit;

import io.breakwater.limit.ProviderRateLimits;
import io.breakwater.limit.ProviderRateLimits.Quota;
import io.breakwater.limit.ProviderRateLimits.Reading;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** The built-in {@link ProviderRateLimits} readers. */
public final class HeaderReaders {

  /** The longest reset or wait a header may ask for; longer ones are cut to it. */
  public static final long MAX_WAIT_NANOS = Duration.ofHours(1).toNanos();

  public static final ProviderRateLimits NONE = new Named("none", (h, now) -> Reading.NONE);

  public static final ProviderRateLimits RETRY_AFTER = new Named("retryAfter",
      (h, now) -> retryAfterOnly(relevant(h), now));

  public static final ProviderRateLimits OPENAI = new Named("openAi", (h, now) -> openAi(relevant(h), now));

  public static final ProviderRateLimits ANTHROPIC = new Named("anthropic", (h, now) -> anthropic(relevant(h), now));

  public static final ProviderRateLimits ALL = new Named("all", (h, now) -> {
    Map<String, String> headers = relevant(h);
    Reading openAi = openAi(headers, now);
    return openAi.requests() != null || openAi.tokens() != null ? openAi : anthropic(headers, now);
  });

  private HeaderReaders() {}

  /** The first value of every rate-limit header, by lower-case name; other headers are left out. */
  static Map<String, String> relevant(Map<String, ? extends List<String>> headers) {
    Map<String, String> found = new HashMap<>();
    for (Map.Entry<String, ? extends List<String>> e : headers.entrySet()) {
      String name = e.getKey();
      if (name == null || e.getValue() == null || e.getValue().isEmpty()) {
        continue;
      }
      String lower = name.toLowerCase(Locale.ROOT);
      if (lower.startsWith("x-ratelimit-") || lower.startsWith("anthropic-ratelimit-")
          || lower.equals("retry-after") || lower.equals("retry-after-ms")) {
        found.putIfAbsent(lower, e.getValue().get(0));
      }
    }
    return found;
  }

  private static Reading openAi(Map<String, String> h, long now) {
    return new Reading(
        quota(h, "x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests", now),
        quota(h, "x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens", now),
        retryAfter(h, now));
  }

  private static Reading anthropic(Map<String, String> h, long now) {
    Quota tokens = anthropicQuota(h, "tokens", now);
    if (tokens == null) {
      Quota input = anthropicQuota(h, "input-tokens", now);
      Quota output = anthropicQuota(h, "output-tokens", now);
      tokens = input == null ? output : output == null ? input : share(output) < share(input) ? output : input;
    }
    return new Reading(anthropicQuota(h, "requests", now), tokens, retryAfter(h, now));
  }

  private static Reading retryAfterOnly(Map<String, String> h, long now) {
    Duration wait = retryAfter(h, now);
    return wait == null ? Reading.NONE : new Reading(null, null, wait);
  }

  /** The share of a quota that is left; 1 when it cannot be told. */
  private static double share(Quota q) {
    return q.limit() > 0 && q.remaining() >= 0 ? (double) q.remaining() / q.limit() : 1;
  }

  @Nullable
  private static Quota anthropicQuota(Map<String, String> h, String kind, long now) {
    String prefix = "anthropic-ratelimit-" + kind + "-";
    return quota(h, prefix + "limit", prefix + "remaining", prefix + "reset", now);
  }

  @Nullable
  private static Quota quota(Map<String, String> h, String limitName, String remainingName, String resetName,
      long now) {
    long limit = ResetValues.count(h.get(limitName));
    long remaining = ResetValues.count(h.get(remainingName));
    long reset = ResetValues.resetNanos(h.get(resetName), now);
    if (limit == ResetValues.INVALID && remaining == ResetValues.INVALID && reset == ResetValues.INVALID) {
      return null;
    }
    return new Quota(limit, remaining, reset == ResetValues.INVALID ? null
        : Duration.ofNanos(Math.min(reset, MAX_WAIT_NANOS)));
  }

  @Nullable
  private static Duration retryAfter(Map<String, String> h, long now) {
    long wait = ResetValues.retryAfterMillisNanos(h.get("retry-after-ms"));
    if (wait == ResetValues.INVALID) {
      wait = ResetValues.retryAfterNanos(h.get("retry-after"), now);
    }
    return wait == ResetValues.INVALID ? null : Duration.ofNanos(Math.min(wait, MAX_WAIT_NANOS));
  }

  /** A reader with a name in {@code toString()}. */
  private record Named(String name, ProviderRateLimits reader) implements ProviderRateLimits {
    @Override
    public Reading read(Map<String, ? extends List<String>> headers, long nowEpochMillis) {
      return reader.read(headers, nowEpochMillis);
    }

    @Override
    public String toString() {
      return "ProviderRateLimits." + name + "()";
    }
  }
}
