package io.breakwater.breaker;

import io.breakwater.internal.Saturating;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Measures how late a scheduler's timers fire, so that a timeout caused by our own starvation (a saturated CPU at
 * a cold start, a long GC pause, JIT compilation) is not blamed on the dependency. It arms one timer at a time, every
 * {@code interval}, on the scheduler the timeouts run on, and notes how late each fires. While a timer is, or
 * recently was (within {@code hold}), at least {@code threshold} late, the scheduler is {@link #overloaded()}, and a
 * breaker given this probe records its {@code TIMEOUT} failures as {@code local_overload}: neither a failure nor a
 * success.
 *
 * <pre>{@code
 * SchedulerLag lag = SchedulerLag.builder().meterRegistry(meters).start();     // yours: dispose it on shutdown
 * CircuitBreakerRegistry breakers = CircuitBreakerRegistry.builder()
 *     .breakers(name -> CircuitBreaker.builder(name).schedulerLag(lag).build())
 *     .build();
 * ...
 * lag.dispose();                                                               // cancels its timer
 * }</pre>
 *
 * <p>Without a probe, every breaker already takes a per-call timeout whose own timer fired at least 100 ms late (and
 * any timeout in the 5 s after it) for our starvation. The probe adds what those timers do not show: starvation seen
 * by its own timer between timeouts, for instance while answers wait unprocessed.
 *
 * <p>The probe belongs to you: nothing in it is global, and it runs until {@link #dispose()}. Its cost is one task
 * on the scheduler per interval (10 a second by default). A timer overdue right now counts even before it fires, so a
 * starved scheduler is seen while it is starved. Defaults: interval 100 ms, threshold 100 ms, hold 5 s,
 * {@code Schedulers::parallel}. Thread-safe.
 */
public final class SchedulerLag implements Disposable {

  public static final Duration DEFAULT_INTERVAL = Duration.ofMillis(100);
  public static final Duration DEFAULT_THRESHOLD = Duration.ofMillis(100);
  public static final Duration DEFAULT_HOLD = Duration.ofSeconds(5);

  private final Scheduler scheduler;
  private final long intervalNanos;
  private final long thresholdNanos;
  private final long holdNanos;

  /** When the armed timer is due, on the scheduler's clock; {@link Long#MAX_VALUE} while none is armed. */
  private volatile long due = Long.MAX_VALUE;
  /** How late the last timer fired. */
  private volatile long lastLateness;
  /** When a timer last fired at least {@code threshold} late; {@link Long#MIN_VALUE} if none has. */
  private volatile long lastOverloadAt = Long.MIN_VALUE;
  private volatile @Nullable Disposable timer;
  private volatile boolean disposed;

  private SchedulerLag(Builder b) {
    this.scheduler = b.scheduler.get();
    this.intervalNanos = Saturating.nanos(b.interval);
    this.thresholdNanos = Saturating.nanos(b.threshold);
    this.holdNanos = Saturating.nanos(b.hold);
    if (b.meterRegistry != null) {
      Gauge.builder("breakwater.scheduler.lag", this, lag -> Saturating.nanos(lag.lag()) / 1e9)
          .tags("scheduler", b.name)
          .description("How late the scheduler's timers fire (the largest lateness within the hold), in seconds")
          .baseUnit("seconds")
          .register(b.meterRegistry);
    }
  }

  /** A builder; {@link Builder#start()} starts the probe. */
  public static Builder builder() {
    return new Builder();
  }

  /** A probe of {@code Schedulers.parallel()} with the default interval, threshold and hold, started. */
  public static SchedulerLag start() {
    return builder().start();
  }

  private void arm() {
    long now = now();
    long at = now + intervalNanos;
    due = at < now ? Long.MAX_VALUE : at;   // an interval of centuries overflows: such a timer never comes due
    Disposable armed = scheduler.schedule(this::fired, Saturating.delayNanos(intervalNanos), TimeUnit.NANOSECONDS);
    timer = armed;
    if (disposed) {
      armed.dispose();
    }
  }

  private void fired() {
    long now = now();
    long at = due;
    long lateness = at == Long.MAX_VALUE ? 0 : Math.max(0, now - at);
    lastLateness = lateness;
    if (lateness >= thresholdNanos) {
      lastOverloadAt = now;
    }
    if (!disposed) {
      arm();
    }
  }

  private long now() {
    return scheduler.now(TimeUnit.NANOSECONDS);
  }

  /**
   * Whether the scheduler is starved: its armed timer is overdue by at least the threshold, or one fired at least that
   * late within the hold. Always {@code false} once disposed.
   */
  public boolean overloaded() {
    if (disposed) {
      return false;
    }
    long now = now();
    long at = due;
    if (at != Long.MAX_VALUE && now - at >= thresholdNanos) {
      return true;
    }
    long since = lastOverloadAt;
    return since != Long.MIN_VALUE && now - since <= holdNanos;
  }

  /** How late the timer now armed is (if overdue), or the last one fired, whichever is later. */
  public Duration lag() {
    long at = due;
    long overdue = at == Long.MAX_VALUE ? 0 : Math.max(0, now() - at);
    return Duration.ofNanos(Math.max(overdue, lastLateness));
  }

  /** Stops probing: cancels the timer; {@link #overloaded()} is {@code false} from now on. */
  @Override
  public void dispose() {
    disposed = true;
    Disposable armed = timer;
    if (armed != null) {
      armed.dispose();
    }
    due = Long.MAX_VALUE;
  }

  @Override
  public boolean isDisposed() {
    return disposed;
  }

  @Override
  public String toString() {
    return "SchedulerLag{" + (disposed ? "disposed" : "lag " + Saturating.millis(lag()) + " ms") + "}";
  }

  /** Builds and starts a {@link SchedulerLag}; {@link #start()} validates and says what to change. */
  public static final class Builder {
    private Supplier<Scheduler> scheduler = Schedulers::parallel;
    private Duration interval = DEFAULT_INTERVAL;
    private Duration threshold = DEFAULT_THRESHOLD;
    private Duration hold = DEFAULT_HOLD;
    @Nullable
    private MeterRegistry meterRegistry;
    private String name = "parallel";

    private Builder() {}

    /** The scheduler to probe, resolved when the probe starts: the one your timeouts run on. */
    public Builder scheduler(Supplier<Scheduler> scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /** How often a timer is armed. Default 100 ms. */
    public Builder interval(Duration interval) {
      this.interval = Objects.requireNonNull(interval, "interval");
      return this;
    }

    /** How late a timer must fire for the scheduler to be overloaded. Default 100 ms. */
    public Builder threshold(Duration threshold) {
      this.threshold = Objects.requireNonNull(threshold, "threshold");
      return this;
    }

    /**
     * How long a late timer keeps the scheduler overloaded: a timeout recorded shortly after the starvation ended was
     * probably caused by it. Default 5 s.
     */
    public Builder hold(Duration hold) {
      this.hold = Objects.requireNonNull(hold, "hold");
      return this;
    }

    /** Publish the lag as the gauge {@code breakwater.scheduler.lag{scheduler=name}} (seconds). */
    public Builder meterRegistry(MeterRegistry meterRegistry, String name) {
      this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
      this.name = Objects.requireNonNull(name, "name");
      return this;
    }

    /** Publish the lag as the gauge {@code breakwater.scheduler.lag{scheduler=parallel}} (seconds). */
    public Builder meterRegistry(MeterRegistry meterRegistry) {
      return meterRegistry(meterRegistry, "parallel");
    }

    /** Validates the settings, arms the first timer and returns the running probe. */
    public SchedulerLag start() {
      positive("interval", interval);
      positive("threshold", threshold);
      if (hold.isNegative()) {
        throw new IllegalArgumentException("SchedulerLag hold is " + hold + ": give zero or a positive duration");
      }
      SchedulerLag lag = new SchedulerLag(this);
      lag.arm();
      return lag;
    }

    private static void positive(String what, Duration value) {
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException("SchedulerLag " + what + " is " + value + ": give a positive duration, "
            + "e.g. 100 ms");
      }
    }
  }
}
