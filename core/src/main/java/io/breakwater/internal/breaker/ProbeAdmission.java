package io.breakwater.internal.breaker;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;

/**
 * The slow path of admission, taken only by a half-open probe: after the local permit, claim the probe through the
 * {@link io.breakwater.breaker.BreakerStateStore} (family first, then tool), and only then subscribe upstream. A
 * denied claim rejects the call; a claim the store failed to answer lets it through (local state decides) and is
 * never released; a cancellation before the hand-over gives back the local permits and the claims already granted.
 * Claims still in flight at cancellation are left to their lease.
 */
final class ProbeAdmission<T> {

  private static final int PENDING = 0;
  private static final int HANDED_OVER = 1;
  private static final int CANCELLED = 2;

  private final GuardOperator<T> guard;
  private final Publisher<? extends T> source;
  private final boolean mono;
  private final Scheduler clock;
  @Nullable private final Phase familyPhase;
  private final Phase toolPhase;
  private final AtomicInteger state = new AtomicInteger(PENDING);
  private volatile int claims;
  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<ProbeAdmission> CLAIMS =
      AtomicIntegerFieldUpdater.newUpdater(ProbeAdmission.class, "claims");

  private ProbeAdmission(GuardOperator<T> guard, Publisher<? extends T> source, boolean mono, Scheduler clock,
      @Nullable Phase familyPhase, Phase toolPhase) {
    this.guard = guard;
    this.source = source;
    this.mono = mono;
    this.clock = clock;
    this.familyPhase = familyPhase;
    this.toolPhase = toolPhase;
  }

  // NullAway cannot see that the family phase is set exactly when the guard has a family breaker
  @SuppressWarnings("NullAway")
  static <T> void subscribe(GuardOperator<T> guard, Publisher<? extends T> source, CoreSubscriber<? super T> actual,
      boolean mono, Scheduler clock, @Nullable Phase familyPhase, Phase toolPhase) {
    ProbeAdmission<T> admission = new ProbeAdmission<>(guard, source, mono, clock, familyPhase, toolPhase);
    Flux<T> flow = admission.claim(guard.family, familyPhase, GuardSubscriber.FAMILY_CLAIMED)
        .flatMapMany(familyOk -> !familyOk
            ? admission.denied(guard.family, familyPhase)
            : admission.claim(guard.tool, toolPhase, GuardSubscriber.TOOL_CLAIMED)
                .flatMapMany(toolOk -> toolOk ? admission.handOver() : admission.denied(guard.tool, toolPhase)))
        .doOnCancel(admission::cancelledBeforeHandOver);
    (mono ? Mono.fromDirect(flow) : flow).subscribe(actual);
  }

  /** Whether the call may go on: a claim the store granted is remembered, to be released when the probe ends. */
  // NullAway cannot see that the phase is set exactly when the core is
  @SuppressWarnings("NullAway")
  private Mono<Boolean> claim(@Nullable BreakerCore core, @Nullable Phase phase, int bit) {
    if (core == null || !phase.isProbe()) {
      return Mono.just(Boolean.TRUE);
    }
    return core.claimProbe().map(claim -> {
      if (claim == BreakerCore.Claim.GRANTED) {
        addClaim(bit);
      }
      return claim != BreakerCore.Claim.DENIED;
    });
  }

  private void addClaim(int bit) {
    for (;;) {
      int current = claims;
      if (CLAIMS.compareAndSet(this, current, current | bit)) {
        return;
      }
    }
  }

  private Flux<T> handOver() {
    if (!state.compareAndSet(PENDING, HANDED_OVER)) {
      return Flux.empty();
    }
    return Flux.from(s -> {
      GuardSubscriber<T> subscriber = new GuardSubscriber<>(Operators.toCoreSubscriber(s), guard, clock,
          familyPhase, toolPhase, mono, claims | GuardSubscriber.PROBE);
      source.subscribe(subscriber);
      subscriber.subscribed();
    });
  }

  /** {@code core} could not claim its probe: someone else is probing. */
  private Flux<T> denied(BreakerCore core, Phase phase) {
    if (!state.compareAndSet(PENDING, CANCELLED)) {
      return Flux.empty();
    }
    core.probeHeldElsewhere(phase, clock);
    releaseOthers(core);
    return Flux.error(core.rejection(clock));
  }

  private void cancelledBeforeHandOver() {
    if (state.compareAndSet(PENDING, CANCELLED)) {
      releaseOthers(null);
    }
  }

  /** Gives back every admission except {@code except}'s (whose phase has moved on). */
  // NullAway cannot see that the family phase is set exactly when the guard has a family breaker
  @SuppressWarnings("NullAway")
  private void releaseOthers(@Nullable BreakerCore except) {
    int held = claims;
    if (guard.family != null && guard.family != except) {
      guard.family.record(familyPhase, BreakerCore.UNUSED, 0, -1, (held & GuardSubscriber.FAMILY_CLAIMED) != 0);
    }
    if (guard.tool != except) {
      guard.tool.record(toolPhase, BreakerCore.UNUSED, 0, -1, (held & GuardSubscriber.TOOL_CLAIMED) != 0);
    }
  }
}
