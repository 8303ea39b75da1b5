package io.breakwater.internal.limit;

import io.breakwater.failure.FailureClassifier;
import io.breakwater.internal.Saturating;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;

/**
 * The validated settings of a concurrency limit, in memory or shared.
 *
 * @param fixed the fixed limit, or -1 when {@code adaptive} is set
 */
public record ConcurrencySettings(String name, int fixed, @Nullable AdaptiveSettings adaptive, Duration maxWait,
    int maxQueue, FailureClassifier classifier, Supplier<Scheduler> scheduler, MeterRegistry meterRegistry,
    int maxQueuePerTask) {

  /** Settings whose tasks may each hold half the queue ({@link TaskShares#DEFAULT_SHARE}). */
  public ConcurrencySettings(String name, int fixed, @Nullable AdaptiveSettings adaptive, Duration maxWait,
      int maxQueue, FailureClassifier classifier, Supplier<Scheduler> scheduler, MeterRegistry meterRegistry) {
    this(name, fixed, adaptive, maxWait, maxQueue, classifier, scheduler, meterRegistry, TaskShares.DEFAULT_SHARE);
  }

  /** Settings whose meters go to {@code Metrics.globalRegistry}. */
  public ConcurrencySettings(String name, int fixed, @Nullable AdaptiveSettings adaptive, Duration maxWait,
      int maxQueue, FailureClassifier classifier, Supplier<Scheduler> scheduler) {
    this(name, fixed, adaptive, maxWait, maxQueue, classifier, scheduler, Metrics.globalRegistry);
  }

  public ConcurrencySettings {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(meterRegistry, "meterRegistry");
    Objects.requireNonNull(maxWait, "maxWait");
    Objects.requireNonNull(classifier, "classifier");
    Objects.requireNonNull(scheduler, "scheduler");
    LimitNames.check("Concurrency limit", name);
    if (adaptive == null && fixed < 1) {
      throw new IllegalArgumentException("Concurrency limit '" + name + "' is fixed(" + fixed
          + "): give 1 or more calls in flight");
    }
    if (maxWait.isNegative()) {
      throw new IllegalArgumentException("Concurrency limit '" + name + "' maxWait is " + maxWait
          + ": give zero (refuse at once) or a positive duration");
    }
    if (maxQueue < 0) {
      throw new IllegalArgumentException("Concurrency limit '" + name + "' maxQueue is " + maxQueue
          + ": give zero (refuse at once) or more calls");
    }
    maxQueuePerTask = TaskShares.check("Concurrency limit '" + name + "'", maxQueuePerTask, maxQueue);
  }

  /** {@code maxWait} in nanoseconds, saturated. */
  public long maxWaitNanos() {
    return Saturating.nanos(maxWait);
  }

  /** The limit a new limiter starts with. */
  public int initialLimit() {
    return adaptive == null ? fixed : adaptive.initial();
  }
}
