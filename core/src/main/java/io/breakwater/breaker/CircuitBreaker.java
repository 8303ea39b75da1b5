package io.breakwater.breaker;

import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.breaker.BreakerCore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A circuit breaker: stops calling a dependency that keeps failing, lets a probe through after a while, and ramps
 * traffic back up once the probe succeeds. Apply it with {@link io.breakwater.Breakwater#guardedBy(CircuitBreaker)}:
 *
 * <pre>{@code
 * CircuitBreaker breaker = CircuitBreaker.builder("weather")
 *     .failureRateThreshold(0.5)
 *     .minimumCalls(20)
 *     .openDuration(Duration.ofSeconds(30))
 *     .build();
 *
 * Mono<Forecast> forecast = client.forecast(city).transformDeferred(guardedBy(breaker));
 * }</pre>
 *
 * <h2>States</h2>
 * <ul>
 *   <li>{@code CLOSED → OPEN} when, over a bucketed time-based sliding window, at least {@link #minimumCalls()}
 *       calls were recorded and the failure rate reached {@link #failureRateThreshold()} — or the slow-call rate
 *       reached {@link #slowCallRateThreshold()}. Rates are evaluated when a failure or a slow call is recorded.</li>
 *   <li>{@code OPEN → HALF_OPEN} after the open duration, on the first call (or {@link #state()} read) after it: no
 *       timer is kept. The open duration is multiplied by {@link #openDurationMultiplier()} (up to
 *       {@link #maxOpenDuration()}) each time the breaker reopens from {@code HALF_OPEN} or while ramping up.</li>
 *   <li>{@code HALF_OPEN} admits exactly {@link #halfOpenProbes()} probes, however many callers arrive; the others
 *       are rejected. A failed (or slow) probe reopens the breaker; when every probe succeeded it closes.</li>
 *   <li>After closing from {@code HALF_OPEN} the breaker ramps up: for {@link #rampUp()} the admitted fraction of
 *       calls rises linearly from {@link #rampUpStartFraction()} to 1; the rest are rejected.</li>
 * </ul>
 *
 * <h2>What counts</h2>
 * Failures are classified by {@link #classifier()} (default {@link FailureClassifier#defaults()}):
 * {@code TIMEOUT}, {@code SERVER_ERROR} and {@code CONNECTION} count as failures; {@code RATE_LIMITED} counts only
 * if {@link Builder#countRateLimited(boolean)} (default no); {@code UNKNOWN} counts unless
 * {@link Builder#countUnknown(boolean)} is false; everything else ({@code INVALID_ARGUMENT}, {@code CLIENT_ERROR},
 * {@code BUSINESS}, {@code DEADLINE_EXCEEDED}, {@code CIRCUIT_OPEN}, {@code FATAL}) is ignored: it is neither a
 * failure nor a success, and an ignored probe gives its permit back. A {@code TIMEOUT} caused by our own starvation
 * is ignored the same way (counted as {@code local_overload}): a per-call timeout whose own timer fired at least
 * 100 ms late ({@link io.breakwater.deadline.CallTimeoutException#used()} beyond its budget), and any {@code TIMEOUT}
 * within the 5 s after one; with a {@link Builder#schedulerLag SchedulerLag}, also a {@code TIMEOUT} while the probe
 * finds the scheduler starved. Cancellation before the first element is
 * ignored the same way; after the first element it is a success. A call is judged by its first element: a stream is
 * slow if its first element took longer than {@link #slowCallThreshold()}, however long it then runs.
 *
 * <h2>Time, state and thread-safety</h2>
 * Time is read from {@link #scheduler()} (default {@code Schedulers::parallel}), resolved at each subscription, so
 * that {@code StepVerifier.withVirtualTime} drives it. Admission on the happy path is a volatile read; outcomes go to
 * striped counters; nothing locks. Calls that end synchronously and densely take a sampled clock value (see
 * {@code docs/breaker.md}), since a clock read can cost more than the rest of the breaker. Transitions are shared
 * with other instances through {@link #stateStore()}. A breaker is thread-safe and meant to be long-lived and shared
 * (see {@link CircuitBreakerRegistry}); its settings are immutable.
 */
public final class CircuitBreaker {

  /** The state of a breaker. */
  public enum State {
    /** Calls go through (during a ramp-up, a rising fraction of them). */
    CLOSED,
    /** Calls are rejected without being made. */
    OPEN,
    /** A fixed number of probe calls go through; the rest are rejected. */
    HALF_OPEN;

    /** The state's name as a metric tag: {@code closed}, {@code open}, {@code half_open}. */
    public String tag() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  public static final double DEFAULT_FAILURE_RATE_THRESHOLD = 0.5;
  public static final int DEFAULT_MINIMUM_CALLS = 20;
  public static final Duration DEFAULT_SLIDING_WINDOW = Duration.ofSeconds(60);
  public static final int DEFAULT_WINDOW_BUCKETS = 10;
  public static final Duration DEFAULT_OPEN_DURATION = Duration.ofSeconds(30);
  public static final double DEFAULT_OPEN_DURATION_MULTIPLIER = 1.0;
  public static final Duration DEFAULT_MAX_OPEN_DURATION = Duration.ofMinutes(5);
  public static final int DEFAULT_HALF_OPEN_PROBES = 1;
  public static final Duration DEFAULT_RAMP_UP = Duration.ofSeconds(10);
  public static final double DEFAULT_RAMP_UP_START_FRACTION = 0.1;
  public static final Duration DEFAULT_SLOW_CALL_THRESHOLD = Duration.ofSeconds(30);
  public static final double DEFAULT_SLOW_CALL_RATE_THRESHOLD = 0.8;

  private final String name;
  private final double failureRateThreshold;
  private final int minimumCalls;
  private final Duration slidingWindow;
  private final int windowBuckets;
  private final Duration openDuration;
  private final double openDurationMultiplier;
  private final Duration maxOpenDuration;
  private final int halfOpenProbes;
  private final Duration rampUp;
  private final double rampUpStartFraction;
  private final @Nullable Duration slowCallThreshold;
  private final double slowCallRateThreshold;
  private final FailureClassifier classifier;
  private final boolean countRateLimited;
  private final boolean countUnknown;
  private final Supplier<Scheduler> scheduler;
  private final MeterRegistry meterRegistry;
  private final BreakerStateStore stateStore;
  @Nullable
  private final SchedulerLag schedulerLag;
  /** The state machine; {@code internal.breaker} reads this field by name, and no method exposes it. */
  private final BreakerCore core;

  private CircuitBreaker(Builder b) {
    this.name = b.name;
    this.failureRateThreshold = b.failureRateThreshold;
    this.minimumCalls = b.minimumCalls;
    this.slidingWindow = b.slidingWindow;
    this.windowBuckets = b.windowBuckets;
    this.openDuration = b.openDuration;
    this.openDurationMultiplier = b.openDurationMultiplier;
    this.maxOpenDuration = b.maxOpenDuration;
    this.halfOpenProbes = b.halfOpenProbes;
    this.rampUp = b.rampUp;
    this.rampUpStartFraction = b.rampUpStartFraction;
    this.slowCallThreshold = b.slowCallThreshold;
    this.slowCallRateThreshold = b.slowCallRateThreshold;
    this.classifier = b.classifier;
    this.countRateLimited = b.countRateLimited;
    this.countUnknown = b.countUnknown;
    this.scheduler = b.scheduler;
    this.meterRegistry = b.meterRegistry;
    this.stateStore = b.stateStore != null ? b.stateStore : BreakerStateStore.inMemory();
    this.schedulerLag = b.schedulerLag;
    this.core = new BreakerCore(this);
  }

  /** A breaker named {@code name} with every setting at its default (see {@link Builder}). */
  public static CircuitBreaker ofDefaults(String name) {
    return builder(name).build();
  }

  /** A builder for a breaker named {@code name} (used in exceptions, events and metric tags). */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** A builder with this breaker's settings and a new name; the built breaker has its own state. */
  public Builder toBuilder(String name) {
    Builder b = new Builder(name);
    b.failureRateThreshold = failureRateThreshold;
    b.minimumCalls = minimumCalls;
    b.slidingWindow = slidingWindow;
    b.windowBuckets = windowBuckets;
    b.openDuration = openDuration;
    b.openDurationMultiplier = openDurationMultiplier;
    b.maxOpenDuration = maxOpenDuration;
    b.halfOpenProbes = halfOpenProbes;
    b.rampUp = rampUp;
    b.rampUpStartFraction = rampUpStartFraction;
    b.slowCallThreshold = slowCallThreshold;
    b.slowCallRateThreshold = slowCallRateThreshold;
    b.classifier = classifier;
    b.countRateLimited = countRateLimited;
    b.countUnknown = countUnknown;
    b.scheduler = scheduler;
    b.meterRegistry = meterRegistry;
    b.stateStore = stateStore;
    b.schedulerLag = schedulerLag;
    return b;
  }

  /**
   * The current state. An {@code OPEN} breaker whose open duration has passed moves to {@code HALF_OPEN} when this is
   * read (or when the next call arrives).
   */
  public State state() {
    return core.currentState();
  }

  /**
   * This breaker's transitions, in order, from subscription on: its own and those applied from other instances
   * through the {@link #stateStore()}. A hot, best-effort stream: a subscriber that has not requested enough misses
   * transitions rather than slowing the breaker.
   */
  public Flux<StateTransition> transitions() {
    return core.transitions();
  }

  /**
   * Opens the breaker now, for operators: every call is rejected (the rejection says the breaker was forced open)
   * until {@link #forceClosed()}, or until another instance's transition arrives through the {@link #stateStore()}.
   * The transition is published to the store like any other, so a shared breaker opens everywhere. Does nothing if
   * the breaker is already forced open.
   */
  public void forceOpen() {
    core.force(State.OPEN);
  }

  /**
   * Closes the breaker now, for operators: full traffic at once (no ramp-up) and an empty window. Published to the
   * {@link #stateStore()} like any other transition. Does nothing if the breaker is closed and not ramping up.
   */
  public void forceClosed() {
    core.force(State.CLOSED);
  }

  /**
   * The breaker's state and what its sliding window holds now. An {@code OPEN} breaker reports the window it opened
   * from (calls age out of it as time passes); a {@code HALF_OPEN} one reports an empty window. Reading it does not
   * change the state and costs one pass over the window's buckets.
   */
  public Snapshot snapshot() {
    long[] totals = core.windowTotals();
    return new Snapshot(core.currentStateWithoutTransition(), totals[0], totals[1], totals[2]);
  }

  /**
   * A breaker's state and the calls in its sliding window, for reporting (e.g. the Spring Boot Actuator endpoint).
   *
   * @param state the state when read ({@code OPEN} is not moved to {@code HALF_OPEN} by reading it)
   * @param calls calls recorded in the window: successes and counted failures (ignored outcomes are not calls)
   * @param failedCalls counted failures in the window
   * @param slowCalls slow calls in the window, successful or not
   */
  public record Snapshot(State state, long calls, long failedCalls, long slowCalls) {

    /** Failed calls over calls, 0 without calls. */
    public double failureRate() {
      return calls == 0 ? 0.0 : (double) failedCalls / calls;
    }

    /** Slow calls over calls, 0 without calls. */
    public double slowCallRate() {
      return calls == 0 ? 0.0 : (double) slowCalls / calls;
    }
  }

  public String name() {
    return name;
  }

  public double failureRateThreshold() {
    return failureRateThreshold;
  }

  public int minimumCalls() {
    return minimumCalls;
  }

  public Duration slidingWindow() {
    return slidingWindow;
  }

  public int windowBuckets() {
    return windowBuckets;
  }

  public Duration openDuration() {
    return openDuration;
  }

  public double openDurationMultiplier() {
    return openDurationMultiplier;
  }

  public Duration maxOpenDuration() {
    return maxOpenDuration;
  }

  public int halfOpenProbes() {
    return halfOpenProbes;
  }

  /** How long the ramp-up after closing lasts; zero when the breaker closes straight to full traffic. */
  public Duration rampUp() {
    return rampUp;
  }

  public double rampUpStartFraction() {
    return rampUpStartFraction;
  }

  /** A call whose first element (or completion) takes at least this long is slow; {@code null} when disabled. */
  public @Nullable Duration slowCallThreshold() {
    return slowCallThreshold;
  }

  public double slowCallRateThreshold() {
    return slowCallRateThreshold;
  }

  public FailureClassifier classifier() {
    return classifier;
  }

  /** Whether {@link FailureKind#RATE_LIMITED} counts as a failure. */
  public boolean countsRateLimited() {
    return countRateLimited;
  }

  /** Whether {@link FailureKind#UNKNOWN} counts as a failure. */
  public boolean countsUnknown() {
    return countUnknown;
  }

  public Supplier<Scheduler> scheduler() {
    return scheduler;
  }

  public MeterRegistry meterRegistry() {
    return meterRegistry;
  }

  public BreakerStateStore stateStore() {
    return stateStore;
  }

  /** The probe that tells timeouts caused by our own starvation, or {@code null}. */
  @Nullable
  public SchedulerLag schedulerLag() {
    return schedulerLag;
  }

  @Override
  public String toString() {
    return "CircuitBreaker[" + name + ", " + core.currentStateWithoutTransition() + "]";
  }

  /**
   * Builds a {@link CircuitBreaker}. Defaults: failure rate 0.5 over {@code minimumCalls} 20 in a 60 s window of 10
   * buckets; open 30 s (no growth; multiplier 1, cap 5 min); 1 half-open probe; ramp-up 10 s from 10 %; slow calls
   * ≥ 30 s at a rate of 0.8; 429 not counted, unknown failures counted; {@code Schedulers::parallel};
   * {@code Metrics.globalRegistry}; a private in-memory state store; no scheduler-lag probe.
   */
  public static final class Builder {
    private String name;
    private double failureRateThreshold = DEFAULT_FAILURE_RATE_THRESHOLD;
    private int minimumCalls = DEFAULT_MINIMUM_CALLS;
    private Duration slidingWindow = DEFAULT_SLIDING_WINDOW;
    private int windowBuckets = DEFAULT_WINDOW_BUCKETS;
    private Duration openDuration = DEFAULT_OPEN_DURATION;
    private double openDurationMultiplier = DEFAULT_OPEN_DURATION_MULTIPLIER;
    private Duration maxOpenDuration = DEFAULT_MAX_OPEN_DURATION;
    private int halfOpenProbes = DEFAULT_HALF_OPEN_PROBES;
    private Duration rampUp = DEFAULT_RAMP_UP;
    private double rampUpStartFraction = DEFAULT_RAMP_UP_START_FRACTION;
    private @Nullable Duration slowCallThreshold = DEFAULT_SLOW_CALL_THRESHOLD;
    private double slowCallRateThreshold = DEFAULT_SLOW_CALL_RATE_THRESHOLD;
    private FailureClassifier classifier = FailureClassifier.defaults();
    private boolean countRateLimited;
    private boolean countUnknown = true;
    private Supplier<Scheduler> scheduler = Schedulers::parallel;
    private MeterRegistry meterRegistry = Metrics.globalRegistry;
    private @Nullable BreakerStateStore stateStore;
    private @Nullable SchedulerLag schedulerLag;

    private Builder(String name) {
      this.name = name;
    }

    /** The fraction of failed calls in the window, between 0 (exclusive) and 1, at which the breaker opens. */
    public Builder failureRateThreshold(double threshold) {
      this.failureRateThreshold = threshold;
      return this;
    }

    /** How many calls the window must hold before a rate can open the breaker (at least 1). */
    public Builder minimumCalls(int minimumCalls) {
      this.minimumCalls = minimumCalls;
      return this;
    }

    /** How far back the failure and slow-call rates look. */
    public Builder slidingWindow(Duration window) {
      this.slidingWindow = window;
      return this;
    }

    /** How far back the rates look, and in how many buckets the window rolls over (1 to 1 000). */
    public Builder slidingWindow(Duration window, int buckets) {
      this.slidingWindow = window;
      this.windowBuckets = buckets;
      return this;
    }

    /** How long the breaker stays open before it lets a probe through. */
    public Builder openDuration(Duration duration) {
      this.openDuration = duration;
      return this;
    }

    /**
     * Makes the open duration grow while the breaker keeps reopening (a failed probe, or failures while ramping
     * up): each reopening multiplies it by {@code multiplier} (at least 1), up to {@code max}. A full close resets
     * it.
     */
    public Builder openDurationGrowth(double multiplier, Duration max) {
      this.openDurationMultiplier = multiplier;
      this.maxOpenDuration = max;
      return this;
    }

    /** How many probe calls {@code HALF_OPEN} admits (at least 1); all must succeed for the breaker to close. */
    public Builder halfOpenProbes(int probes) {
      this.halfOpenProbes = probes;
      return this;
    }

    /**
     * After closing from {@code HALF_OPEN}, admit a fraction of calls rising linearly from {@code startFraction}
     * (between 0 exclusive and 1) to all of them over {@code period}. {@code Duration.ZERO} closes straight to full
     * traffic.
     */
    public Builder rampUp(Duration period, double startFraction) {
      this.rampUp = period;
      this.rampUpStartFraction = startFraction;
      return this;
    }

    /** Ramp up over {@code period} from the current start fraction (default 0.1). */
    public Builder rampUp(Duration period) {
      this.rampUp = period;
      return this;
    }

    /**
     * Calls whose first element (or completion, if none) takes at least {@code threshold} are slow; the breaker
     * opens when the fraction of slow calls in the window reaches {@code rateThreshold} (between 0 exclusive and
     * 1).
     */
    public Builder slowCall(Duration threshold, double rateThreshold) {
      this.slowCallThreshold = threshold;
      this.slowCallRateThreshold = rateThreshold;
      return this;
    }

    /** Turns the slow-call trigger off; an asynchronous call then reads the clock once instead of twice. */
    public Builder noSlowCallTrigger() {
      this.slowCallThreshold = null;
      return this;
    }

    /** How failures are classified (default {@link FailureClassifier#defaults()}). */
    public Builder classifier(FailureClassifier classifier) {
      this.classifier = classifier;
      return this;
    }

    /** Whether {@link FailureKind#RATE_LIMITED} (HTTP 429) counts as a failure; default {@code false}. */
    public Builder countRateLimited(boolean count) {
      this.countRateLimited = count;
      return this;
    }

    /** Whether {@link FailureKind#UNKNOWN} counts as a failure; default {@code true}. */
    public Builder countUnknown(boolean count) {
      this.countUnknown = count;
      return this;
    }

    /** Where time comes from, resolved at each subscription; default {@code Schedulers::parallel}. */
    public Builder scheduler(Supplier<Scheduler> scheduler) {
      this.scheduler = scheduler;
      return this;
    }

    /** Where the breaker's meters go; default {@link Metrics#globalRegistry}. */
    public Builder meterRegistry(MeterRegistry registry) {
      this.meterRegistry = registry;
      return this;
    }

    /** Where the breaker shares its transitions and probe claims; default a private in-memory store. */
    public Builder stateStore(BreakerStateStore store) {
      this.stateStore = store;
      return this;
    }

    /**
     * Records a {@code TIMEOUT} that ends a call while {@code lag} finds the scheduler starved as
     * {@code local_overload}, not as a failure: the timeout was ours. Share one probe between the breakers of a
     * process; it belongs to you (dispose it on shutdown). Default: none; the breaker still takes a per-call timeout
     * whose own timer fired late (and timeouts in the 5 s after it) for ours, which needs no probe.
     */
    public Builder schedulerLag(SchedulerLag lag) {
      this.schedulerLag = Objects.requireNonNull(lag, "lag");
      return this;
    }

    /** A new breaker, in state {@code CLOSED}; throws {@link IllegalArgumentException} on a bad setting. */
    public CircuitBreaker build() {
      if (name == null || name.isBlank()) {
        throw new IllegalArgumentException("Circuit breaker name is blank: name it after the tool or backend it "
            + "guards");
      }
      fraction("failureRateThreshold", failureRateThreshold);
      fraction("rampUp startFraction", rampUpStartFraction);
      if (minimumCalls < 1) {
        throw new IllegalArgumentException("minimumCalls of '" + name + "' is " + minimumCalls
            + ": give at least 1");
      }
      if (halfOpenProbes < 1) {
        throw new IllegalArgumentException("halfOpenProbes of '" + name + "' is " + halfOpenProbes
            + ": give at least 1");
      }
      positive("slidingWindow", slidingWindow);
      if (windowBuckets < 1 || windowBuckets > 1000) {
        throw new IllegalArgumentException("slidingWindow buckets of '" + name + "' is " + windowBuckets
            + ": give 1 to 1000");
      }
      if (Saturating.nanos(slidingWindow) / windowBuckets < 1_000_000L) {
        throw new IllegalArgumentException("slidingWindow of '" + name + "' is " + slidingWindow + " in "
            + windowBuckets + " buckets: make each bucket at least 1 ms");
      }
      positive("openDuration", openDuration);
      positive("maxOpenDuration", maxOpenDuration);
      if (!(openDurationMultiplier >= 1.0) || Double.isInfinite(openDurationMultiplier)) {
        throw new IllegalArgumentException("openDurationGrowth multiplier of '" + name + "' is "
            + openDurationMultiplier + ": give 1 (no growth) or more");
      }
      if (maxOpenDuration.compareTo(openDuration) < 0) {
        throw new IllegalArgumentException("maxOpenDuration of '" + name + "' (" + maxOpenDuration
            + ") is shorter than openDuration (" + openDuration + "): raise it or lower openDuration");
      }
      Objects.requireNonNull(rampUp, "rampUp period is null: give Duration.ZERO to turn ramp-up off");
      if (rampUp.isNegative()) {
        throw new IllegalArgumentException("rampUp of '" + name + "' is " + rampUp
            + ": give a positive duration, or Duration.ZERO to turn ramp-up off");
      }
      if (slowCallThreshold != null) {
        positive("slowCall threshold", slowCallThreshold);
        fraction("slowCall rateThreshold", slowCallRateThreshold);
      }
      Objects.requireNonNull(classifier, "classifier");
      Objects.requireNonNull(scheduler, "scheduler");
      Objects.requireNonNull(meterRegistry, "meterRegistry");
      return new CircuitBreaker(this);
    }

    private void fraction(String what, double value) {
      if (!(value > 0.0 && value <= 1.0)) {
        throw new IllegalArgumentException(what + " of '" + name + "' is " + value
            + ": give a fraction above 0 and at most 1 (0.5 means 50 %)");
      }
    }

    private void positive(String what, Duration value) {
      Objects.requireNonNull(value, what + " of '" + name + "' is null");
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException(what + " of '" + name + "' is " + value + ": give a positive duration");
      }
    }
  }
}
