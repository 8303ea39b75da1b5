package io.breakwater.limit;

import io.breakwater.internal.limit.HeaderReaders;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Reads what a provider says about its rate limits in a response's headers, so that a {@link RateLimit} can slow down
 * before the provider answers 429 — also when other clients share the same key.
 *
 * <pre>{@code
 * RateLimit openai = RateLimit.builder("openai")
 *     .requests(500, Duration.ofMinutes(1))
 *     .tokens(200_000, Duration.ofMinutes(1))
 *     .providerHeaders(ProviderRateLimits.openAi())
 *     .build();
 * }</pre>
 *
 * <table>
 *   <caption>Headers read</caption>
 *   <tr><th>reader</th><th>requests</th><th>tokens</th></tr>
 *   <tr><td>{@link #openAi()}</td><td>{@code x-ratelimit-limit-requests}, {@code x-ratelimit-remaining-requests},
 *       {@code x-ratelimit-reset-requests}</td><td>{@code x-ratelimit-limit-tokens},
 *       {@code x-ratelimit-remaining-tokens}, {@code x-ratelimit-reset-tokens}</td></tr>
 *   <tr><td>{@link #anthropic()}</td><td>{@code anthropic-ratelimit-requests-limit}, {@code -remaining},
 *       {@code -reset}</td><td>{@code anthropic-ratelimit-tokens-*} (the most restrictive token limit in effect);
 *       without them, whichever of {@code anthropic-ratelimit-input-tokens-*} and {@code -output-tokens-*} has the
 *       smaller share left</td></tr>
 *   <tr><td>{@link #retryAfter()}</td><td colspan="2">{@code retry-after-ms}, else {@code retry-after} (seconds or an
 *       HTTP date): no call before then</td></tr>
 * </table>
 *
 * <p>Reset values are read in every form the providers use: Go durations ({@code 6m0s}, {@code 1s}, {@code 20ms},
 * {@code 1h2m3.5s}), RFC 3339 instants ({@code 2025-01-01T00:00:30Z}) and seconds ({@code 30}, {@code 1.5}). Numbers
 * are parsed with saturating arithmetic; a value that does not parse, is negative or is longer than 64 characters is
 * ignored, and a reset or a wait is never taken as longer than one hour. Header names are matched case-insensitively.
 */
@FunctionalInterface
public interface ProviderRateLimits {

  /**
   * What {@code headers} say about the limits.
   *
   * @param headers a response's headers, by name in any case
   * @param nowEpochMillis the limit's clock in epoch milliseconds, to turn reset instants into durations
   * @return the reading, {@link Reading#NONE} when the headers say nothing
   */
  Reading read(Map<String, ? extends List<String>> headers, long nowEpochMillis);

  /** This reader's reading, completed field by field by {@code other}'s where this one says nothing. */
  default ProviderRateLimits orElse(ProviderRateLimits other) {
    Objects.requireNonNull(other, "other");
    return (headers, now) -> {
      Reading mine = read(headers, now);
      Reading theirs = other.read(headers, now);
      return new Reading(mine.requests() != null ? mine.requests() : theirs.requests(),
          mine.tokens() != null ? mine.tokens() : theirs.tokens(),
          mine.retryAfter() != null ? mine.retryAfter() : theirs.retryAfter());
    };
  }

  /** OpenAI's {@code x-ratelimit-*} headers and {@code retry-after}. */
  static ProviderRateLimits openAi() {
    return HeaderReaders.OPENAI;
  }

  /** Anthropic's {@code anthropic-ratelimit-*} headers and {@code retry-after}. */
  static ProviderRateLimits anthropic() {
    return HeaderReaders.ANTHROPIC;
  }

  /** Only {@code retry-after-ms} and {@code retry-after}. */
  static ProviderRateLimits retryAfter() {
    return HeaderReaders.RETRY_AFTER;
  }

  /** OpenAI's, then Anthropic's headers, and {@code retry-after}: the default of {@link RateLimit}. */
  static ProviderRateLimits all() {
    return HeaderReaders.ALL;
  }

  /** Reads nothing: the limit keeps to its configured rates. */
  static ProviderRateLimits none() {
    return HeaderReaders.NONE;
  }

  /**
   * One kind of permit as the provider sees it.
   *
   * @param limit the most permits the provider allows per its interval, or {@link #UNKNOWN}
   * @param remaining the permits left now, or {@link #UNKNOWN}
   * @param reset how long until the provider has refilled the limit, or {@code null}
   */
  record Quota(long limit, long remaining, @Nullable Duration reset) {

    /** A count the headers did not give. */
    public static final long UNKNOWN = -1;

    public Quota {
      if (limit < UNKNOWN || remaining < UNKNOWN) {
        throw new IllegalArgumentException("Quota limit " + limit + " and remaining " + remaining
            + ": give zero or more, or Quota.UNKNOWN");
      }
      if (reset != null && reset.isNegative()) {
        throw new IllegalArgumentException("Quota reset is " + reset + ": give zero or a positive duration");
      }
    }
  }

  /**
   * What one response said.
   *
   * @param requests the request quota, or {@code null}
   * @param tokens the token quota, or {@code null}
   * @param retryAfter how long the provider asks to wait before the next call, or {@code null}
   */
  record Reading(@Nullable Quota requests, @Nullable Quota tokens, @Nullable Duration retryAfter) {

    /** A reading that says nothing. */
    public static final Reading NONE = new Reading(null, null, null);

    public Reading {
      if (retryAfter != null && retryAfter.isNegative()) {
        throw new IllegalArgumentException("retryAfter is " + retryAfter + ": give zero or a positive duration");
      }
    }

    /** Whether the reading says nothing. */
    public boolean isEmpty() {
      return requests == null && tokens == null && retryAfter == null;
    }
  }
}
