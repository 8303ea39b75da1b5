package io.breakwater.stream;

import io.breakwater.deadline.Deadline;
import io.breakwater.internal.Saturating;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;

/**
 * The timeouts of a stream, for {@link io.breakwater.Breakwater#streamTimeouts(StreamTimeouts)}: how long it may take
 * to give its first progress item, and how long it may then go without progress. Heartbeats do not count as
 * progress (see {@code streamTimeouts(spec, isProgress)}).
 *
 * <pre>{@code
 * StreamTimeouts timeouts = StreamTimeouts.builder()
 *     .firstItem(Duration.ofSeconds(30))   // a reasoning model may think before its first token
 *     .idle(Duration.ofSeconds(3))         // then tokens must keep coming
 *     .build();
 * tokens.transformDeferred(streamTimeouts(timeouts, e -> !e.isHeartbeat()));
 * }</pre>
 *
 * <ul>
 *   <li><b>First item</b> ({@link FirstItemTimeoutException}): from subscription to the first progress item.</li>
 *   <li><b>Idle</b> ({@link IdleTimeoutException}): from the last progress item; from subscription too when no
 *       first-item timeout is set.</li>
 *   <li><b>From the deadline</b> ({@link Builder#firstItemFromDeadline()}, {@link Builder#idleFromDeadline()}): at
 *       subscription, the {@link Deadline} in the Context gives {@link Deadline#perCallBudget()} and
 *       {@link Deadline#idleBudget()}; without one, {@value #DEFAULT_FIRST_ITEM_SECONDS} s and
 *       {@value #DEFAULT_IDLE_SECONDS} s.</li>
 *   <li><b>Precision</b>: exact by default: a timeout fires at last progress + d (subscription + d for a missing
 *       first item), to the nanosecond in virtual time, plus only the scheduler's own lateness on a real clock. Still
 *       one timer per subscription: when it finds recent progress it re-arms for the remainder (Netty's
 *       {@code IdleStateHandler}); each progress item reads the clock once. {@link Builder#coarse()} trades
 *       precision for the cheapest hot path (no clock read per item): a stall is then detected between d and
 *       d + d/{@value #TICKS_PER_TIMEOUT}, never earlier.</li>
 *   <li><b>Metrics</b>: {@code breakwater.stream.timeouts}, tagged {@code type=first_item|idle}, in
 *       {@link Builder#meterRegistry} (default {@code Metrics.globalRegistry}).</li>
 *   <li><b>Time</b> comes from {@link Builder#scheduler(Supplier)} if set, else from the deadline's scheduler, else
 *       {@code Schedulers.parallel()}, resolved at subscription.</li>
 * </ul>
 *
 * <p>Immutable and thread-safe; build once, use everywhere.
 */
public final class StreamTimeouts {

  /** The first-item timeout when it comes from the deadline and there is none: 12 s. */
  public static final long DEFAULT_FIRST_ITEM_SECONDS = 12;
  /** The idle timeout when it comes from the deadline and there is none: 3 s. */
  public static final long DEFAULT_IDLE_SECONDS = 3;
  /** In {@link Builder#coarse()} mode, the idle timer looks at progress this many times per idle timeout. */
  public static final int TICKS_PER_TIMEOUT = 4;

  private final @Nullable Duration firstItem;
  private final boolean firstItemFromDeadline;
  private final @Nullable Duration idle;
  private final boolean idleFromDeadline;
  private final @Nullable Supplier<Scheduler> scheduler;
  private final boolean coarse;
  private final Counter firstItemTimeouts;
  private final Counter idleTimeouts;

  private StreamTimeouts(Builder b) {
    this.firstItem = b.firstItem;
    this.firstItemFromDeadline = b.firstItemFromDeadline;
    this.idle = b.idle;
    this.idleFromDeadline = b.idleFromDeadline;
    this.scheduler = b.scheduler;
    this.coarse = b.coarse;
    this.firstItemTimeouts = timeouts(b.meterRegistry, "first_item");
    this.idleTimeouts = timeouts(b.meterRegistry, "idle");
  }

  private static Counter timeouts(MeterRegistry registry, String type) {
    return Counter.builder("breakwater.stream.timeouts")
        .description("Streams failed by a first-item or idle timeout")
        .tag("type", type)
        .register(registry);
  }

  /** Counts a first-item timeout ({@code breakwater.stream.timeouts}, {@code type=first_item}). */
  public Counter firstItemTimeouts() {
    return firstItemTimeouts;
  }

  /** Counts an idle timeout ({@code breakwater.stream.timeouts}, {@code type=idle}). */
  public Counter idleTimeouts() {
    return idleTimeouts;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The fixed first-item timeout, or {@code null} when none or when it comes from the deadline. */
  public @Nullable Duration firstItem() {
    return firstItem;
  }

  public boolean firstItemFromDeadline() {
    return firstItemFromDeadline;
  }

  /** The fixed idle timeout, or {@code null} when none or when it comes from the deadline. */
  public @Nullable Duration idle() {
    return idle;
  }

  public boolean idleFromDeadline() {
    return idleFromDeadline;
  }

  /** Whether the coarse tick was chosen over exact timeouts (see {@link Builder#coarse()}). */
  public boolean coarse() {
    return coarse;
  }

  /** The scheduler set explicitly, or {@code null} (deadline's, else {@code Schedulers.parallel()}). */
  public @Nullable Supplier<Scheduler> scheduler() {
    return scheduler;
  }

  /** The first-item timeout in force for a subscription under {@code deadline} (may be null), in ns; 0 if none. */
  public long firstItemNanos(@Nullable Deadline deadline) {
    if (firstItemFromDeadline) {
      return deadline != null ? Math.max(1L, deadline.perCallNanos())
          : Duration.ofSeconds(DEFAULT_FIRST_ITEM_SECONDS).toNanos();
    }
    return firstItem == null ? 0L : Saturating.nanos(firstItem);
  }

  /** The idle timeout in force for a subscription under {@code deadline} (may be null), in ns; 0 if none. */
  public long idleNanos(@Nullable Deadline deadline) {
    if (idleFromDeadline) {
      return deadline != null ? Math.max(1L, Saturating.nanos(deadline.idleBudget()))
          : Duration.ofSeconds(DEFAULT_IDLE_SECONDS).toNanos();
    }
    return idle == null ? 0L : Saturating.nanos(idle);
  }

  @Override
  public String toString() {
    return "StreamTimeouts{firstItem=" + (firstItemFromDeadline ? "deadline" : firstItem) + ", idle="
        + (idleFromDeadline ? "deadline" : idle) + (coarse ? ", coarse" : "") + "}";
  }

  /** Builds {@link StreamTimeouts}; not thread-safe; {@link #build()} validates. */
  public static final class Builder {
    private @Nullable Duration firstItem;
    private boolean firstItemFromDeadline;
    private @Nullable Duration idle;
    private boolean idleFromDeadline;
    private @Nullable Supplier<Scheduler> scheduler;
    private boolean coarse;
    private MeterRegistry meterRegistry = Metrics.globalRegistry;

    private Builder() {}

    /**
     * Where {@code breakwater.stream.timeouts} (tag {@code type}: {@code first_item}, {@code idle}) is counted
     * (default {@code Metrics.globalRegistry}).
     */
    public Builder meterRegistry(MeterRegistry meterRegistry) {
      this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
      return this;
    }

    /** The time allowed from subscription to the first progress item. */
    public Builder firstItem(Duration timeout) {
      this.firstItem = positive("firstItem", timeout);
      this.firstItemFromDeadline = false;
      return this;
    }

    /** The first-item timeout is the deadline's per-call budget at subscription (12 s without a deadline). */
    public Builder firstItemFromDeadline() {
      this.firstItem = null;
      this.firstItemFromDeadline = true;
      return this;
    }

    /** The time allowed between progress items. */
    public Builder idle(Duration timeout) {
      this.idle = positive("idle", timeout);
      this.idleFromDeadline = false;
      return this;
    }

    /** The idle timeout is the deadline's idle budget at subscription (3 s without a deadline). */
    public Builder idleFromDeadline() {
      this.idle = null;
      this.idleFromDeadline = true;
      return this;
    }

    /**
     * Detects a stall with a tick every timeout/{@value #TICKS_PER_TIMEOUT} instead of exactly: between d and
     * d + d/{@value #TICKS_PER_TIMEOUT} after the last progress, never earlier. Items then read no clock, for streams of
     * millions of items a second; an LLM stream (hundreds a second) wants the exact default.
     */
    public Builder coarse() {
      this.coarse = true;
      return this;
    }

    /** Where time comes from (for tests: a virtual-time scheduler), resolved at subscription. */
    public Builder scheduler(Supplier<Scheduler> scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    public StreamTimeouts build() {
      if (firstItem == null && !firstItemFromDeadline && idle == null && !idleFromDeadline) {
        throw new IllegalArgumentException("StreamTimeouts has neither a first-item nor an idle timeout: set "
            + "firstItem(..), idle(..) or their fromDeadline() forms");
      }
      return new StreamTimeouts(this);
    }

    private static Duration positive(String what, Duration d) {
      Objects.requireNonNull(d, what);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(what + " timeout is " + d + ": give a positive duration");
      }
      return d;
    }
  }
}
