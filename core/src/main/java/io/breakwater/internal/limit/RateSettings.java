package io.breakwater.internal.limit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.breakwater.internal.Saturating;
import io.breakwater.limit.ProviderRateLimits;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;

/**
 * The validated settings of a rate limit, in memory or shared.
 *
 * @param requests requests per {@code requestInterval}, or -1 for unlimited
 * @param tokens tokens per {@code tokenInterval}, or -1 for unlimited
 */
public record RateSettings(String name, long requests, @Nullable Duration requestInterval, long tokens,
    @Nullable Duration tokenInterval, ProviderRateLimits headers, Duration maxWait, int maxQueue,
    Supplier<Scheduler> scheduler, MeterRegistry meterRegistry, int maxQueuePerTask) {

  /** Settings whose tasks may each hold half the queue ({@link TaskShares#DEFAULT_SHARE}). */
  public RateSettings(String name, long requests, @Nullable Duration requestInterval, long tokens,
      @Nullable Duration tokenInterval, ProviderRateLimits headers, Duration maxWait, int maxQueue,
      Supplier<Scheduler> scheduler, MeterRegistry meterRegistry) {
    this(name, requests, requestInterval, tokens, tokenInterval, headers, maxWait, maxQueue, scheduler, meterRegistry,
        TaskShares.DEFAULT_SHARE);
  }

  /** Settings whose meters go to {@code Metrics.globalRegistry}. */
  public RateSettings(String name, long requests, @Nullable Duration requestInterval, long tokens,
      @Nullable Duration tokenInterval, ProviderRateLimits headers, Duration maxWait, int maxQueue,
      Supplier<Scheduler> scheduler) {
    this(name, requests, requestInterval, tokens, tokenInterval, headers, maxWait, maxQueue, scheduler,
        Metrics.globalRegistry);
  }

  /** The interval of a limit learnt from the provider for a kind of permit that was not configured. */
  public static final Duration LEARNT_INTERVAL = Duration.ofMinutes(1);

  /** The longest interval a limit may have. */
  public static final Duration MAX_INTERVAL = Duration.ofDays(366);

  public RateSettings {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(meterRegistry, "meterRegistry");
    Objects.requireNonNull(headers, "headers");
    Objects.requireNonNull(maxWait, "maxWait");
    Objects.requireNonNull(scheduler, "scheduler");
    LimitNames.check("Rate limit", name);
    check(name, "requests", requests, requestInterval);
    check(name, "tokens", tokens, tokenInterval);
    if (maxWait.isNegative()) {
      throw new IllegalArgumentException("Rate limit '" + name + "' maxWait is " + maxWait
          + ": give zero (refuse at once) or a positive duration");
    }
    if (maxQueue < 0) {
      throw new IllegalArgumentException("Rate limit '" + name + "' maxQueue is " + maxQueue
          + ": give zero (refuse at once) or more calls");
    }
    maxQueuePerTask = TaskShares.check("Rate limit '" + name + "'", maxQueuePerTask, maxQueue);
  }

  private static void check(String name, String what, long count, @Nullable Duration interval) {
    if (count == -1) {
      return;
    }
    if (count < 1) {
      throw new IllegalArgumentException("Rate limit '" + name + "' allows " + count + " " + what
          + " per interval: give 1 or more (leave it unset for no limit)");
    }
    if (interval == null || interval.isNegative() || interval.isZero() || interval.compareTo(MAX_INTERVAL) > 0) {
      throw new IllegalArgumentException("Rate limit '" + name + "' " + what + " interval is " + interval
          + ": give a positive duration of at most 366 days, e.g. Duration.ofMinutes(1)");
    }
  }

  /** {@code maxWait} in nanoseconds, saturated. */
  public long maxWaitNanos() {
    return Saturating.nanos(maxWait);
  }
}
