package io.breakwater.internal.breaker;

import io.breakwater.breaker.BreakerStateStore;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreaker.State;
import io.breakwater.breaker.CircuitBreakerOpenException;
import io.breakwater.breaker.SchedulerLag;
import io.breakwater.breaker.StateTransition;
import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.internal.PrivateFields;
import io.breakwater.internal.Saturating;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.context.ContextView;
import reactor.util.retry.Retry;

/**
 * The state machine behind a {@link CircuitBreaker}. Admission reads one volatile field; outcomes go to the window of
 * the phase that admitted the call; transitions replace the phase by compare-and-set and are delivered in order by a
 * {@link TransitionDispatcher} to the event stream, the meters and the {@link BreakerStateStore}.
 */
public final class BreakerCore {

  private static final Logger LOG = Loggers.getLogger(BreakerCore.class);

  /** Outcomes of a call, as the guard reports them. */
  static final int SUCCESS = 0;
  static final int FAILURE = 1;
  static final int IGNORED = 2;
  static final int CANCELLED = 3;
  /** Admitted but never made (another breaker of the guard rejected the call). */
  static final int UNUSED = 4;
  /** A timeout while our own scheduler was starved: not the dependency's failure; ignored. */
  static final int LOCAL_OVERLOAD = 5;
  /** For a family breaker: a timeout of an attempt cut by a tool's tightened adaptive timeout; ignored. */
  static final int ADAPTIVE_CUT = 6;

  /** {@link CircuitBreaker}'s private {@code core} field, which no method of the breaker exposes. */
  private static final VarHandle CORE = PrivateFields.handle(CircuitBreaker.class, "core", BreakerCore.class);

  /** A per-call timer firing at least this late (100 ms, many ticks of the timer wheel) shows our own starvation. */
  static final long LATE_TIMER_NANOS = Saturating.nanos(SchedulerLag.DEFAULT_THRESHOLD);
  /** How long after a late timer the breaker still takes timeouts for our own (5 s). */
  static final long LATE_HOLD_NANOS = Saturating.nanos(SchedulerLag.DEFAULT_HOLD);

  /** The state machine of {@code breaker}. */
  static BreakerCore of(CircuitBreaker breaker) {
    return (BreakerCore) CORE.get(breaker);
  }

  /**
   * {@code guardedBy} this breaker alone: one operator per breaker, made at its first use, so that a chain built per
   * call allocates none. Its fields are final, so a thread that reads the field unsynchronised sees it whole (two
   * threads may both make one at first; either serves).
   */
  @Nullable
  private GuardOperator<?> guard;

  GuardOperator<?> guard() {
    GuardOperator<?> g = guard;
    if (g == null) {
      g = GuardOperator.alone(this);
      guard = g;
    }
    return g;
  }

  final String name;
  private final double failureRateThreshold;
  private final int minimumCalls;
  private final long bucketNanos;
  private final int buckets;
  private final long baseOpenNanos;
  private final double openMultiplier;
  private final long maxOpenNanos;
  private final int probes;
  private final long rampNanos;
  private final double rampStart;
  /** Negative when the slow-call trigger is off. */
  final long slowNanos;
  private final double slowRateThreshold;
  private final FailureClassifier classifier;
  private final boolean countRateLimited;
  private final boolean countUnknown;
  final Supplier<Scheduler> scheduler;
  private final BreakerStateStore store;
  @Nullable
  private final SchedulerLag lag;
  private final String origin;
  private final BreakerMetrics metrics;
  /** Every success ever recorded: the windows' success count and the success metric. */
  private final LongAdder successes = new LongAdder();
  private final Sinks.Many<StateTransition> events = Sinks.many().multicast().directBestEffort();
  private final TransitionDispatcher dispatcher;

  /**
   * Clock sampling for synchronous successes: the latest clock value any call read, and a mask such that a
   * synchronous success reads the clock itself with probability 1 / (mask + 1). The mask doubles while samples
   * find calls dense (the previous read less than {@link #denseNanos} ago) and drops to 0 (every call reads) as soon
   * as one does not.
   */
  private volatile long lastNow = Long.MIN_VALUE;
  private volatile int sampleMask;
  private static final int MAX_SAMPLE_MASK = 63;
  private final long denseNanos;

  /** When a timeout whose timer fired late was last recorded; {@link Long#MIN_VALUE} if none has been. */
  private volatile long lateTimerAt = Long.MIN_VALUE;

  private volatile Phase phase;
  private static final AtomicReferenceFieldUpdater<BreakerCore, Phase> PHASE =
      AtomicReferenceFieldUpdater.newUpdater(BreakerCore.class, Phase.class, "phase");

  public BreakerCore(CircuitBreaker config) {
    this.name = config.name();
    this.failureRateThreshold = config.failureRateThreshold();
    this.minimumCalls = config.minimumCalls();
    this.buckets = config.windowBuckets();
    this.bucketNanos = Saturating.nanos(config.slidingWindow()) / buckets;
    this.denseNanos = Math.max(1, bucketNanos / 64);
    this.baseOpenNanos = Saturating.nanos(config.openDuration());
    this.openMultiplier = config.openDurationMultiplier();
    this.maxOpenNanos = Saturating.nanos(config.maxOpenDuration());
    this.probes = config.halfOpenProbes();
    this.rampNanos = Saturating.nanos(config.rampUp());
    this.rampStart = config.rampUpStartFraction();
    this.slowNanos = config.slowCallThreshold() == null ? -1 : Saturating.nanos(config.slowCallThreshold());
    this.slowRateThreshold = config.slowCallRateThreshold();
    this.classifier = config.classifier();
    this.countRateLimited = config.countsRateLimited();
    this.countUnknown = config.countsUnknown();
    this.scheduler = config.scheduler();
    this.store = config.stateStore();
    this.lag = config.schedulerLag();
    this.origin = name + "@" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    this.phase = Phase.closed(0, Long.MIN_VALUE, 0, baseOpenNanos, 0, newWindow());
    this.dispatcher = new TransitionDispatcher(1, this::deliver);
    this.metrics = new BreakerMetrics(config.meterRegistry(), name, this, successes);
    store.transitions(name)
        .filter(t -> !origin.equals(t.origin()))
        .retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofSeconds(1)).maxBackoff(Duration.ofMinutes(1))
            .doBeforeRetry(s -> LOG.warn("Breaker '{}': state store transitions failed, resubscribing: {}", name,
                s.failure().toString())))
        .subscribe(this::applyRemote);
  }

  private SlidingWindow newWindow() {
    return new SlidingWindow(bucketNanos, buckets, successes);
  }

  static long now(Scheduler clock) {
    return clock.now(TimeUnit.NANOSECONDS);
  }

  /**
   * The time of a call that ended synchronously, during its subscription. Reading the clock can cost more than the
   * rest of the breaker (50 ns on a virtualised clock), so while calls are dense only a random sample of them reads
   * it and the others take the latest value read: at most a small fraction of a bucket old, since the sample
   * interval adapts to keep it so. Every failure, every asynchronous call and every half-open probe reads the clock.
   */
  long sampledNow(Scheduler clock) {
    int mask = sampleMask;
    if (mask != 0 && (ThreadLocalRandom.current().nextInt() & mask) != 0) {
      return lastNow;
    }
    long now = now(clock);
    long previous = lastNow;
    lastNow = now;
    int next = now - previous < denseNanos && previous != Long.MIN_VALUE ? Math.min(mask * 2 + 1, MAX_SAMPLE_MASK)
        : 0;
    if (next != mask) {
      sampleMask = next;
    }
    return now;
  }

  /** Notes a clock value read for another reason (a failure, an asynchronous call), keeping samples fresh. */
  long observed(long now) {
    long last = lastNow;
    if (last == Long.MIN_VALUE || now - last > denseNanos) {
      lastNow = now;
      if (sampleMask != 0) {
        sampleMask = 0;
      }
    }
    return now;
  }


  /** The phase that admits a call, or {@code null} if the call is rejected. Reads the clock only when not CLOSED. */
  @Nullable Phase acquire(Scheduler clock) {
    Phase p = phase;
    if (p.state == State.CLOSED && !p.ramping) {
      return p;
    }
    return acquireSlow(p, clock);
  }

  private @Nullable Phase acquireSlow(Phase p, Scheduler clock) {
    long now = now(clock);
    for (;;) {
      switch (p.state) {
        case CLOSED -> {
          if (!p.ramping) {
            return p;
          }
          if (now - p.until >= 0) {
            PHASE.compareAndSet(this, p, p.rampDone());
            return p;
          }
          double fraction = admittedFraction(p, now);
          long seq = p.rampSeq.getAndIncrement();
          // admit call seq when it brings floor(admitted) up: exactly `fraction` of any run of calls
          return (long) ((seq + 1) * fraction) > (long) (seq * fraction) ? p : null;
        }
        case OPEN -> {
          if (now - p.until < 0) {
            return null;
          }
          Phase half = Phase.halfOpen(p.gen + 1, now, p.openNanos, p.reopens, probes);
          transition(p, half, now);
          p = phase;
        }
        default -> {
          return p.takePermit() ? p : null;
        }
      }
    }
  }

  /** The fraction of calls a ramping-up phase {@code p} admits at {@code now}. */
  private double admittedFraction(Phase p, long now) {
    return Math.min(1.0, Math.max(rampStart, rampStart + (1.0 - rampStart) * (double) (now - p.since) / rampNanos));
  }

  /** The exception for a call this breaker just rejected (and counts the rejection). */
  CircuitBreakerOpenException rejection(Scheduler clock) {
    Phase p = phase;
    if (p.state == State.CLOSED) {
      metrics.rejectedRampingUp();
    } else {
      metrics.rejected();
    }
    return switch (p.state) {
      case OPEN -> p.openNanos == FORCED_OPEN_NANOS
          ? new CircuitBreakerOpenException(name, State.OPEN, Duration.ofNanos(Math.max(0, p.until - now(clock))),
              "forced open by an operator; calls are rejected until it is forced closed")
          : CircuitBreakerOpenException.open(name, Duration.ofNanos(Math.max(0, p.until - now(clock))), probes);
      case HALF_OPEN -> new CircuitBreakerOpenException(name, State.HALF_OPEN, Duration.ZERO,
          probes + (probes == 1 ? " probe is" : " probes are") + " in flight; other calls are rejected until "
              + (probes == 1 ? "it ends" : "they end"));
      case CLOSED -> CircuitBreakerOpenException.rampingUp(name, admittedFraction(p, now(clock)));
    };
  }

  /** The answer to a probe claim. */
  enum Claim {
    /** The store granted a claim: it must be released when the probe ends. */
    GRANTED,
    /** Another instance holds the claims. */
    DENIED,
    /**
     * The store failed to answer: local state decides and the probe runs, but nothing is released afterwards, since
     * the store may never have counted the claim (releasing it would free another instance's); if it did, its lease
     * ends it.
     */
    UNANSWERED
  }

  /** Claims a probe through the store. */
  Mono<Claim> claimProbe() {
    return store.claimProbe(name, probes, Duration.ofNanos(baseOpenNanos))
        .map(granted -> granted ? Claim.GRANTED : Claim.DENIED)
        .defaultIfEmpty(Claim.DENIED)
        .onErrorResume(e -> {
          LOG.warn("Breaker '{}': state store probe claim failed, using local state: {}", name, e.toString());
          return Mono.just(Claim.UNANSWERED);
        });
  }

  void releaseProbeClaim() {
    store.releaseProbe(name).subscribe(null,
        e -> LOG.warn("Breaker '{}': state store probe release failed: {}", name, e.toString()));
  }

  /** Another instance holds the probe: stay open locally (not published) for another open duration. */
  void probeHeldElsewhere(Phase half, Scheduler clock) {
    long now = now(clock);
    half.permits.incrementAndGet();
    Phase open = Phase.open(half.gen + 1, now, half.openNanos, half.reopens);
    transition(half, open, now, false);
  }


  /** Whether a failure of {@code kind} counts towards opening the breaker. */
  boolean counts(FailureKind kind) {
    return switch (kind) {
      case TIMEOUT, SERVER_ERROR, CONNECTION -> true;
      case RATE_LIMITED -> countRateLimited;
      case UNKNOWN -> countUnknown;
      default -> false;
    };
  }

  /**
   * How an error ending a call at {@code now} counts: a failure, ignored, or a timeout that our own starvation caused
   * ({@link #starved}).
   */
  int outcomeOf(Throwable error, long now) {
    FailureKind kind = classifier.classify(error);
    if (!counts(kind)) {
      return IGNORED;
    }
    return kind == FailureKind.TIMEOUT && starved(error, now) ? LOCAL_OVERLOAD : FAILURE;
  }

  /**
   * Whether a timeout ending a call at {@code now} was caused by our own starvation: its own per-call timer fired at
   * least {@link #LATE_TIMER_NANOS} late ({@link LateTimer}), or one did within the {@link #LATE_HOLD_NANOS} before
   * (starved, we also see answers late while our timers fire on time), or the {@link SchedulerLag} probe, if any, finds
   * the scheduler starved.
   */
  private boolean starved(Throwable timeout, long now) {
    if (lag != null && lag.overloaded()) {
      return true;
    }
    if (LateTimer.lateness(timeout) >= LATE_TIMER_NANOS) {
      lateTimerAt = now;
      return true;
    }
    long since = lateTimerAt;
    return since != Long.MIN_VALUE && now - since <= LATE_HOLD_NANOS;
  }

  /**
   * {@link #outcomeOf} for this breaker guarding a family: a timeout that a member tool's own tightened adaptive
   * timeout caused ({@link AdaptiveCut}) does not count, so that the family never opens on our cuts alone.
   */
  int familyOutcomeOf(Throwable error, ContextView context, long now) {
    int outcome = outcomeOf(error, now);
    return outcome == FAILURE && AdaptiveCut.cut(error, context) ? ADAPTIVE_CUT : outcome;
  }

  /**
   * Records the outcome of a call admitted by {@code p}. {@code latency} is the time to the first element (or the
   * end), negative when unknown; {@code now} is when the outcome is recorded.
   */
  void record(Phase p, int outcome, long now, long latency, boolean claimed) {
    boolean slow = slowNanos >= 0 && latency >= slowNanos && (outcome == SUCCESS || outcome == FAILURE);
    if (p.state == State.CLOSED) {
      recordClosed(p, outcome, now, slow);
    } else if (p.state == State.HALF_OPEN) {
      recordProbe(p, outcome, now, slow, claimed);
    }
  }

  private void recordClosed(Phase p, int outcome, long now, boolean slow) {
    switch (outcome) {
      case SUCCESS -> {
        SlidingWindow.Bucket bucket = p.window.bucket(now);
        successes.increment();
        if (slow) {
          bucket.slow.increment();
          metrics.slow();
          evaluate(p, now);
        }
      }
      case FAILURE -> {
        SlidingWindow.Bucket bucket = p.window.bucket(now);
        bucket.failures.increment();
        metrics.failure();
        if (slow) {
          bucket.slow.increment();
          metrics.slow();
        }
        evaluate(p, now);
      }
      default -> countWithoutVerdict(outcome);
    }
  }

  /** Counts an outcome that is neither a failure nor a success. */
  private void countWithoutVerdict(int outcome) {
    switch (outcome) {
      case IGNORED -> metrics.ignored();
      case CANCELLED -> metrics.cancelled();
      case LOCAL_OVERLOAD -> metrics.localOverload();
      case ADAPTIVE_CUT -> metrics.adaptiveCut();
      default -> {
        // UNUSED: nothing happened
      }
    }
  }

  /**
   * A probe's store claim is released as soon as its call ends, before its verdict or its local permit: a claim is
   * held exactly while a probe call runs.
   */
  private void recordProbe(Phase p, int outcome, long now, boolean slow, boolean claimed) {
    if (claimed) {
      releaseProbeClaim();
    }
    switch (outcome) {
      case SUCCESS -> {
        successes.increment();
        if (slow) {
          metrics.slow();
          reopen(p, now);
        } else if (p.probeSuccesses.incrementAndGet() >= probes) {
          transition(p, Phase.closed(p.gen + 1, now, rampNanos, p.openNanos, p.reopens, newWindow()), now);
        }
      }
      case FAILURE -> {
        metrics.failure();
        reopen(p, now);
      }
      default -> {
        countWithoutVerdict(outcome);
        p.permits.incrementAndGet(); // the probe ended without a verdict: let the next caller probe
      }
    }
  }

  private void evaluate(Phase p, long now) {
    Phase current = phase;
    if (current.gen != p.gen || current.state != State.CLOSED) {
      return;
    }
    SlidingWindow.Totals totals = p.window.totals(now);
    if (totals.calls() < minimumCalls) {
      return;
    }
    double calls = totals.calls();
    boolean failing = totals.failures() / calls >= failureRateThreshold;
    boolean slow = slowNanos >= 0 && totals.slow() / calls >= slowRateThreshold;
    if (failing || slow) {
      // collapsing again while still ramping up counts as reopening
      boolean reopening = current.ramping && now - current.until < 0;
      openFrom(current, now, reopening);
    }
  }

  private void reopen(Phase half, long now) {
    openFrom(half, now, true);
  }

  private void openFrom(Phase from, long now, boolean reopening) {
    int reopens = reopening ? from.reopens + 1 : 0;
    long openNanos = reopening ? grow(from.openNanos) : baseOpenNanos;
    transition(from, Phase.open(from.gen + 1, now, openNanos, reopens, from.window), now);
  }

  private long grow(long openNanos) {
    double grown = openNanos * openMultiplier;
    return grown >= maxOpenNanos ? maxOpenNanos : (long) grown;
  }


  private boolean transition(Phase from, Phase to, long now) {
    return transition(from, to, now, true);
  }

  private boolean transition(Phase from, Phase to, long now, boolean publish) {
    if (!PHASE.compareAndSet(this, from, to)) {
      return false;
    }
    Duration open = to.state == State.OPEN ? Duration.ofNanos(to.openNanos) : Duration.ZERO;
    dispatcher.submit(new TransitionDispatcher.Pending(to.gen,
        new StateTransition(name, from.state, to.state, instant(now), open, origin), publish));
    return true;
  }

  private void deliver(TransitionDispatcher.Pending pending) {
    StateTransition t = pending.transition();
    try {
      metrics.transition(t.from(), t.to());
      events.tryEmitNext(t);
      if (pending.publish()) {
        store.publish(t).subscribe(null,
            e -> LOG.warn("Breaker '{}': state store publish failed: {}", name, e.toString()));
      }
    } catch (RuntimeException e) {
      LOG.warn("Breaker '{}': delivering transition {} failed: {}", name, t, e.toString());
    }
  }

  /**
   * Applies a transition another instance published: its OPEN and CLOSED; each instance half-opens by itself. The
   * transition is dated by this instance's clock when it arrives, never by the sender's: monotonic clocks of two hosts
   * share no origin, so the open duration and the ramp-up are measured from local time only.
   */
  void applyRemote(StateTransition t) {
    long at = now(scheduler.get());
    for (;;) {
      Phase current = phase;
      Phase next;
      if (t.to() == State.OPEN) {
        if (current.state == State.OPEN) {
          return;
        }
        long openNanos = Saturating.nanos(t.openDuration());   // another instance's word
        next = Phase.open(current.gen + 1, at, openNanos, current.reopens);
      } else if (t.to() == State.CLOSED) {
        if (current.state == State.CLOSED) {
          return;
        }
        next = Phase.closed(current.gen + 1, at, rampNanos, current.openNanos, current.reopens, newWindow());
      } else {
        return;
      }
      if (PHASE.compareAndSet(this, current, next)) {
        dispatcher.submit(new TransitionDispatcher.Pending(next.gen,
            new StateTransition(name, current.state, next.state, instant(at), t.openDuration(), t.origin()), false));
        return;
      }
    }
  }

  private static Instant instant(long nanos) {
    return Instant.ofEpochSecond(0, nanos);
  }


  /**
   * The open duration of a breaker forced open: about 73 years, so that it stays open until forced closed, and short
   * enough that no clock value plus it overflows.
   */
  static final long FORCED_OPEN_NANOS = Long.MAX_VALUE / 4;

  /**
   * Forces the breaker into {@code target}: {@code OPEN} until forced closed, or {@code CLOSED} at full traffic (no
   * ramp-up) with an empty window. The transition is published like any other; nothing happens if the breaker is
   * already forced open, or closed at full traffic.
   */
  public void force(State target) {
    if (target == State.HALF_OPEN) {
      throw new IllegalArgumentException("A breaker can be forced OPEN or CLOSED, not HALF_OPEN");
    }
    for (;;) {
      Phase current = phase;
      if (current.state == target && (target == State.OPEN ? current.openNanos == FORCED_OPEN_NANOS
          : !current.ramping)) {
        return;
      }
      long now = now(scheduler.get());
      Phase next = target == State.OPEN
          ? Phase.open(current.gen + 1, now, FORCED_OPEN_NANOS, current.reopens, current.window)
          : Phase.closed(current.gen + 1, now, 0, baseOpenNanos, 0, newWindow());
      if (transition(current, next, now)) {
        return;
      }
    }
  }

  /** Calls, failures and slow calls in the window now: the closed episode's, or the one an open breaker left. */
  public long[] windowTotals() {
    Phase p = phase;
    if (p.window == null) {
      return new long[3];
    }
    SlidingWindow.Totals totals = p.window.totals(now(scheduler.get()));
    return new long[] {totals.calls(), totals.failures(), totals.slow()};
  }

  /** The current state, moving OPEN to HALF_OPEN first if the open duration has passed. */
  public State currentState() {
    Phase p = phase;
    if (p.state == State.OPEN) {
      long now = now(scheduler.get());
      if (now - p.until >= 0) {
        transition(p, Phase.halfOpen(p.gen + 1, now, p.openNanos, p.reopens, probes), now);
        return phase.state;
      }
    }
    return p.state;
  }

  public State currentStateWithoutTransition() {
    return phase.state;
  }

  public Flux<StateTransition> transitions() {
    return events.asFlux();
  }
}
