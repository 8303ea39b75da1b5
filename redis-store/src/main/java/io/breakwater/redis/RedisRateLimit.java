package io.breakwater.redis;

import io.breakwater.internal.limit.RateEngine;
import io.breakwater.internal.limit.RateSettings;
import io.breakwater.internal.limit.SharedSettings;
import io.breakwater.limit.RateLimit;
import java.util.Objects;
import org.redisson.api.RedissonReactiveClient;

/**
 * A {@link RateLimit} shared by every instance through Redis: one pair of buckets (requests and tokens) per key of
 * the provider, in one hash, {@code bw:rate:{<name>}}, so that every instance together keeps to the provider's limits
 * and learns from its headers. It takes its name and settings from an in-memory limit used as a template.
 *
 * <pre>{@code
 * RateLimit openai = RedisRateLimit.builder(redisson, RateLimit.builder("openai")
 *         .requests(500, Duration.ofMinutes(1))
 *         .tokens(200_000, Duration.ofMinutes(1))
 *         .providerHeaders(ProviderRateLimits.openAi())
 *         .build())
 *     .build();
 * }</pre>
 *
 * <ul>
 *   <li><b>One script per acquire.</b> A call takes its request and tokens with one Lua script that refills the
 *       buckets by Redis {@code TIME} (not the clients' clocks); when they are not there, it says when they will
 *       be. A call that has something to settle (actual usage, the provider's headers, a 429, a refusal before the
 *       wire) costs one more script when it ends; a call that has nothing costs none.</li>
 *   <li><b>The same rules as in memory</b> (see {@link RateLimit}): provider headers rebased to the call's admission,
 *       the reserve after a 429, refusal at once when a call could not run in time, fair queuing per task — within
 *       each instance; between instances, whoever asks first after the refill is served.</li>
 *   <li><b>Fails open by default.</b> If Redis does not answer within {@code operationTimeout} (default 500 ms), calls
 *       go through a local rate limit with the same settings for a second (it still reads the provider's headers, so
 *       it slows down when the key runs low), then Redis is asked again. {@link Builder#failClosed()} refuses them
 *       instead ({@code STORE_UNAVAILABLE}).</li>
 * </ul>
 *
 * <p>Give every instance the same settings: each sends them with every script.
 */
public final class RedisRateLimit {

  private RedisRateLimit() {}

  /** A builder of the limit {@code template} shared through Redis. */
  public static Builder builder(RedissonReactiveClient redisson, RateLimit template) {
    return new Builder(redisson, template);
  }

  /** Builds a shared {@link RateLimit}. */
  public static final class Builder extends SharedLimitBuilder<Builder> {
    private final RateEngine template;

    private Builder(RedissonReactiveClient redisson, RateLimit template) {
      super(redisson, "bw:rate:");
      Objects.requireNonNull(template, "template");
      if (!(template instanceof RateEngine engine)) {
        throw new IllegalArgumentException("Template " + template.getClass().getName() + " is not a limit built by "
            + "RateLimit.builder(..)");
      }
      this.template = engine;
    }

    public RateLimit build() {
      RateSettings settings = template.settings();
      return RateEngine.shared(settings, new SharedSettings(operationTimeout, SharedSettings.DEFAULT_LEASE,
          SharedSettings.DEFAULT_POLL_INTERVAL, failOpen), new RedisBuckets(redisson, key(settings.name()), settings));
    }
  }
}
