package io.breakwater.hedge;

import io.breakwater.internal.hedge.HedgeRuntime;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * How {@link io.breakwater.Breakwater#hedgedBy(HedgePolicy) hedgedBy} sends backup attempts of a slow call to one
 * dependency: after which delay, how many, and within which budget.
 *
 * <pre>{@code
 * HedgePolicy search = HedgePolicy.builder()
 *     .name("search")
 *     .delayPercentile(95)          // hedge a call that is slower than 95 % of recent answers (the default)
 *     .maxHedges(1)                 // at most one backup attempt per call (the default)
 *     .budget(0.1)                  // hedges stay under 10 % of calls (the default)
 *     .build();
 * Mono<Results> results = client.search(query).transformDeferred(hedgedBy(search));
 * }</pre>
 *
 * <table>
 *   <caption>Defaults</caption>
 *   <tr><th>setting</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code name}</td><td>{@code "default"}</td><td>the dependency: the metrics' {@code dependency} tag, the
 *       events' {@code hedge} field</td></tr>
 *   <tr><td>{@code delay} / {@code delayPercentile}</td><td>p95 of recent latency</td><td>when a hedge starts: a
 *       fixed delay, or a percentile of the latencies of the last 1 000 to 2 000 answers (no hedging until 20 are
 *       known)</td></tr>
 *   <tr><td>{@code maxHedges}</td><td>1</td><td>backup attempts per call, 1 to 10; hedge k starts k delays after
 *       the call</td></tr>
 *   <tr><td>{@code budget}</td><td>0.1</td><td>hedges stay under this share of calls</td></tr>
 *   <tr><td>{@code scheduler}</td><td>{@code Schedulers::parallel}</td><td>clock and timer when no deadline is in
 *       force (with one, the deadline's scheduler), resolved at subscription</td></tr>
 *   <tr><td>{@code meterRegistry}</td><td>{@code Metrics.globalRegistry}</td><td>where the meters go</td></tr>
 *   <tr><td>{@code eventLog}</td><td>SLF4J logger {@code breakwater.hedge.calls} at INFO</td><td>receives one JSON
 *       event per hedged call</td></tr>
 * </table>
 *
 * <p><b>State.</b> A policy holds the state of its dependency: the latency histogram that gives the adaptive delay
 * and the hedge budget (a token bucket that every call fills by {@code budget} of a token and every hedge empties
 * by one; it starts empty and holds at most 10 tokens, so hedges never exceed {@code budget} × calls). Build one per
 * dependency and share it; two policies built alike share nothing.
 *
 * <p>Build policies with {@link #builder()}; this interface is not for implementing. Thread-safe.
 */
public interface HedgePolicy {

  /** Default name: {@code "default"}. */
  String DEFAULT_NAME = "default";
  /** Default percentile of recent latency after which a hedge starts: 95. */
  double DEFAULT_PERCENTILE = 95.0;
  /** Default number of backup attempts per call: 1. */
  int DEFAULT_MAX_HEDGES = 1;
  /** The most backup attempts per call a policy may allow: 10. */
  int MAX_HEDGES_LIMIT = 10;
  /** Default share of calls that may be hedged: 0.1. */
  double DEFAULT_BUDGET = 0.1;
  /** The longest fixed delay accepted: 1 hour. */
  Duration MAX_DELAY = Duration.ofHours(1);
  /** Answers needed before an adaptive delay is used; until then calls are timed but not hedged: 20. */
  int WARM_UP_SAMPLES = 20;

  /** The dependency's name: a metric tag, never user data. */
  String name();

  /** The fixed delay, or empty when the delay is a percentile of recent latency. */
  Optional<Duration> delay();

  /** The percentile of recent latency used as the delay, or 0 with a fixed delay. */
  double delayPercentile();

  /** Backup attempts per call, at most. */
  int maxHedges();

  /** The share of calls that may be hedged. */
  double budget();

  /** The supplier of the scheduler used when no deadline is in force; called at subscription. */
  Supplier<Scheduler> scheduler();

  MeterRegistry meterRegistry();

  /**
   * The delay a call subscribed now would get before its first hedge, before the deadline's clamp: the fixed delay,
   * or the learnt percentile; empty while an adaptive policy is still warming up.
   */
  Optional<Duration> currentDelay();

  /** A builder with every setting at its default. */
  static Builder builder() {
    return new Builder();
  }

  /** Builds a {@link HedgePolicy}; {@link #build()} validates and says what to change. Not thread-safe. */
  final class Builder {
    private String name = DEFAULT_NAME;
    @Nullable
    private Duration delay;
    private double percentile = DEFAULT_PERCENTILE;
    private int maxHedges = DEFAULT_MAX_HEDGES;
    private double budget = DEFAULT_BUDGET;
    private Supplier<Scheduler> scheduler = Schedulers::parallel;
    private MeterRegistry meterRegistry = Metrics.globalRegistry;
    @Nullable
    private Consumer<String> eventLog;

    private Builder() {}

    /** The dependency's name, e.g. {@code "search"}: a metric tag, so never user data. Default {@code "default"}. */
    public Builder name(String name) {
      this.name = Objects.requireNonNull(name, "name");
      return this;
    }

    /** Start a hedge after this fixed delay, in (0, 1 h]; replaces a {@link #delayPercentile(double)}. */
    public Builder delay(Duration delay) {
      this.delay = Objects.requireNonNull(delay, "delay");
      return this;
    }

    /**
     * Start a hedge once the call is slower than this percentile, in (0, 100], of the dependency's recent answers;
     * replaces a {@link #delay(Duration)}. Default 95.
     */
    public Builder delayPercentile(double percentile) {
      this.percentile = percentile;
      this.delay = null;
      return this;
    }

    /** Backup attempts per call, 1 to 10. Default 1. */
    public Builder maxHedges(int maxHedges) {
      this.maxHedges = maxHedges;
      return this;
    }

    /** Hedges stay under this share of calls, in (0, 1]. Default 0.1. */
    public Builder budget(double ratio) {
      this.budget = ratio;
      return this;
    }

    /** Clock and timer when no deadline is in force; resolved at subscription. Default {@code Schedulers::parallel}. */
    public Builder scheduler(Supplier<Scheduler> scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /** Where the {@code breakwater.hedge.*} meters go. Default {@code Metrics.globalRegistry}. */
    public Builder meterRegistry(MeterRegistry meterRegistry) {
      this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
      return this;
    }

    /** Send each hedged call's JSON event here instead of the SLF4J logger {@code breakwater.hedge.calls}. */
    public Builder eventLog(Consumer<String> eventLog) {
      this.eventLog = Objects.requireNonNull(eventLog, "eventLog");
      return this;
    }

    public HedgePolicy build() {
      if (name.isBlank()) {
        throw new IllegalArgumentException("Hedge policy name is blank: name it after the dependency it calls");
      }
      if (delay != null && (delay.isNegative() || delay.isZero() || delay.compareTo(MAX_DELAY) > 0)) {
        throw new IllegalArgumentException("Hedge delay is " + delay + ": give a positive duration up to 1 h, e.g."
            + " the dependency's p95 latency, or use delayPercentile(95)");
      }
      if (delay == null && !(percentile > 0 && percentile <= 100)) {
        throw new IllegalArgumentException("Hedge delayPercentile is " + percentile
            + ": give a percentile in (0, 100], e.g. 95");
      }
      if (maxHedges < 1 || maxHedges > MAX_HEDGES_LIMIT) {
        throw new IllegalArgumentException("maxHedges is " + maxHedges + ": give 1 to " + MAX_HEDGES_LIMIT
            + " backup attempts per call (e.g. 1)");
      }
      if (!(budget > 0 && budget <= 1)) {
        throw new IllegalArgumentException("Hedge budget is " + budget
            + ": give the share of calls that may be hedged, in (0, 1] (e.g. 0.1 for 10 %)");
      }
      return new HedgeRuntime(name, delay, delay == null ? percentile : 0, maxHedges, budget, scheduler,
          meterRegistry, eventLog);
    }
  }
}
