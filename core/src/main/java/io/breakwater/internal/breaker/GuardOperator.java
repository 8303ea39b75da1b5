package io.breakwater.internal.breaker;

import io.breakwater.breaker.CircuitBreaker;
import java.util.function.Function;
import io.breakwater.internal.Lift;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;

/**
 * {@code guardedBy}: admits each subscription through a family breaker (if any) and then a tool breaker, and
 * reports its outcome to both. A rejection fails the subscriber at once, without subscribing upstream; a rejection
 * by the tool breaker gives the family's admission back unused. A {@code Mono} stays a {@code Mono}.
 */
public final class GuardOperator<T> implements Function<Publisher<T>, Publisher<T>>, Lift.OnSubscribe<T> {

  @Nullable final BreakerCore family;
  final BreakerCore tool;
  /** Whether either breaker needs the subscription time (to tell slow calls). */
  final boolean timesCalls;

  private GuardOperator(@Nullable BreakerCore family, BreakerCore tool) {
    this.family = family;
    this.tool = tool;
    this.timesCalls = tool.slowNanos >= 0 || (family != null && family.slowNanos >= 0);
  }

  /** Guards with one breaker. */
  @SuppressWarnings("unchecked")   // the operator holds no T: one instance serves every item type
  public static <T> GuardOperator<T> of(CircuitBreaker breaker) {
    return (GuardOperator<T>) BreakerCore.of(breaker).guard();
  }

  /** A new operator guarding with {@code tool} alone; {@link BreakerCore#guard()} keeps one per breaker. */
  static GuardOperator<Object> alone(BreakerCore tool) {
    return new GuardOperator<>(null, tool);
  }

  /** Guards with a family breaker (checked first) and a tool breaker. */
  public static <T> GuardOperator<T> of(@Nullable CircuitBreaker family, CircuitBreaker tool) {
    return new GuardOperator<>(family == null ? null : BreakerCore.of(family), BreakerCore.of(tool));
  }

  @Override
  public Publisher<T> apply(Publisher<T> source) {
    return Lift.apply(source, "guardedBy", this);
  }

  @Override
  public void subscribe(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono) {
    Scheduler clock = tool.scheduler.get();
    Phase familyPhase = null;
    if (family != null) {
      familyPhase = family.acquire(clock);
      if (familyPhase == null) {
        Operators.error(actual, family.rejection(clock));
        return;
      }
    }
    Phase toolPhase = tool.acquire(clock);
    if (toolPhase == null) {
      if (family != null && familyPhase != null) {
        family.record(familyPhase, BreakerCore.UNUSED, 0, -1, false);
      }
      Operators.error(actual, tool.rejection(clock));
      return;
    }
    if (toolPhase.isProbe() || (familyPhase != null && familyPhase.isProbe())) {
      ProbeAdmission.subscribe(this, source, actual, mono, clock, familyPhase, toolPhase);
      return;
    }
    GuardSubscriber<T> subscriber = new GuardSubscriber<>(actual, this, clock, familyPhase, toolPhase, mono, 0);
    Lift.subscribeUpstream(source, subscriber);
    subscriber.subscribed();
  }
}
