package io.breakwater.internal.hedge;

import io.breakwater.hedge.HedgePolicy;
import io.breakwater.internal.Saturating;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;

/**
 * The {@link HedgePolicy} that {@link HedgePolicy.Builder#build()} makes: the settings, and the state they govern
 * (the budget, the latency window, the meters). Thread-safe.
 */
public final class HedgeRuntime implements HedgePolicy {

  private final String name;
  @Nullable
  private final Duration delay;
  private final long delayNanos;
  private final double percentile;
  private final int maxHedges;
  private final double budgetRatio;
  private final Supplier<Scheduler> scheduler;
  private final MeterRegistry meterRegistry;

  final HedgeBudget budget;
  @Nullable
  final LatencyWindow latency;
  final HedgeMetrics metrics;
  final HedgeEvents events;

  public HedgeRuntime(String name, @Nullable Duration delay, double percentile, int maxHedges, double budget,
      Supplier<Scheduler> scheduler, MeterRegistry meterRegistry, @Nullable Consumer<String> eventLog) {
    this.name = name;
    this.delay = delay;
    this.delayNanos = delay == null ? -1 : Saturating.nanos(delay);
    this.percentile = percentile;
    this.maxHedges = maxHedges;
    this.budgetRatio = budget;
    this.scheduler = scheduler;
    this.meterRegistry = meterRegistry;
    this.budget = new HedgeBudget(budget);
    this.latency = delay == null ? new LatencyWindow(percentile, WARM_UP_SAMPLES) : null;
    this.metrics = new HedgeMetrics(meterRegistry, name);
    this.events = new HedgeEvents(eventLog);
  }

  /** The policy's runtime, refusing a {@link HedgePolicy} that {@link HedgePolicy#builder()} did not build. */
  public static HedgeRuntime of(HedgePolicy policy) {
    if (policy instanceof HedgeRuntime runtime) {
      return runtime;
    }
    throw new IllegalArgumentException("HedgePolicy " + policy.getClass().getName() + " was not built by "
        + "HedgePolicy.builder(): build it with HedgePolicy.builder()...build()");
  }

  /** The delay before the first hedge now, in nanoseconds; -1 while an adaptive policy warms up. */
  long delayNanos() {
    return latency == null ? delayNanos : latency.delayNanos();
  }

  boolean adaptive() {
    return latency != null;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Optional<Duration> delay() {
    return Optional.ofNullable(delay);
  }

  @Override
  public double delayPercentile() {
    return percentile;
  }

  @Override
  public int maxHedges() {
    return maxHedges;
  }

  @Override
  public double budget() {
    return budgetRatio;
  }

  @Override
  public Supplier<Scheduler> scheduler() {
    return scheduler;
  }

  @Override
  public MeterRegistry meterRegistry() {
    return meterRegistry;
  }

  @Override
  public Optional<Duration> currentDelay() {
    long nanos = delayNanos();
    return nanos < 0 ? Optional.empty() : Optional.of(Duration.ofNanos(nanos));
  }

  @Override
  public String toString() {
    return "HedgePolicy{" + name + ", " + (delay != null ? "delay=" + delay : "delay=p" + percentile)
        + ", maxHedges=" + maxHedges + ", budget=" + budgetRatio + "}";
  }
}
