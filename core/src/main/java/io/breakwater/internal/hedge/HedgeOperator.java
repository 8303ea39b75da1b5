package io.breakwater.internal.hedge;

import io.breakwater.deadline.Deadline;
import io.breakwater.hedge.HedgePolicy;
import io.breakwater.hedge.UnsafeHedgeException;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.Lift;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.ContextView;

/**
 * {@code hedgedBy}: a {@code Mono} stays a {@code Mono}, anything else becomes a {@code Flux}. The function is
 * stateless and can be shared; each subscription gets its own {@link HedgeSubscriber}.
 */
public final class HedgeOperator<T> implements Function<Publisher<T>, Publisher<T>>, Lift.OnSubscribe<T> {

  final HedgeRuntime policy;
  @Nullable
  final Predicate<? super T> isContent;
  final List<Supplier<? extends Publisher<T>>> alternates;

  private HedgeOperator(HedgeRuntime policy, @Nullable Predicate<? super T> isContent,
      List<Supplier<? extends Publisher<T>>> alternates) {
    this.policy = policy;
    this.isContent = isContent;
    this.alternates = alternates;
  }

  /**
   * @param isContent which items of a stream are content (the others, framing and heartbeats, do not end the race);
   *     {@code null}: every item; ignored for a {@code Mono}, whose value is its answer
   * @param alternates where hedge k goes: {@code alternates.get((k - 1) % size)}; empty: the source again
   */
  public static <T> HedgeOperator<T> of(HedgePolicy policy, @Nullable Predicate<? super T> isContent,
      List<? extends Supplier<? extends Publisher<T>>> alternates) {
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(alternates, "alternates");
    for (int i = 0; i < alternates.size(); i++) {
      Objects.requireNonNull(alternates.get(i), "alternates[" + i + "]");
    }
    return new HedgeOperator<>(HedgeRuntime.of(policy), isContent, List.copyOf(alternates));
  }

  @Override
  public Publisher<T> apply(Publisher<T> source) {
    return Lift.apply(source, "hedgedBy", this);
  }

  /**
   * Whether a backup attempt could repeat a side effect: a {@code NON_IDEMPOTENT_WRITE} (declared, or undeclared
   * inside {@code idempotentBy}), whose second send runs while the first may be processed, claim or not; or a
   * {@code DEDUPLICATED_WRITE} without the idempotency key that the dependency deduplicates on.
   */
  private static boolean unsafe(ContextView ctx) {
    Object declared = ctx.getOrDefault(ContextKeys.SIDE_EFFECT, null);
    boolean keyed = ctx.hasKey(ContextKeys.IDEMPOTENCY_KEY);
    return declared == SideEffect.NON_IDEMPOTENT_WRITE || (declared == null && keyed)
        || (declared == SideEffect.DEDUPLICATED_WRITE && !keyed);
  }

  @Override
  public void subscribe(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono) {
    ContextView ctx = actual.currentContext();
    if (ctx.hasKey(ContextKeys.HEDGED)) {
      // inside an attempt of an outer hedgedBy: that one hedges, this one would multiply the attempts
      Lift.subscribeUpstream(source, actual);
      return;
    }
    if (unsafe(ctx)) {
      Operators.error(actual, new UnsafeHedgeException(policy.name()));
      return;
    }
    policy.budget.onRequest();
    Deadline deadline = ctx.getOrDefault(ContextKeys.DEADLINE, null);
    Scheduler scheduler = deadline != null ? deadline.scheduler() : policy.scheduler().get();
    long step = policy.delayNanos();
    if (step >= 0 && deadline != null) {
      long remaining = deadline.remainingNanos();
      // spread the hedges so that each still gets as long as the gap before it
      step = remaining <= 0 ? -1 : Math.min(step, remaining / (policy.maxHedges() + 1));
    }
    HedgeSubscriber<T> subscriber = new HedgeSubscriber<>(actual, this, source, scheduler, step, mono);
    actual.onSubscribe(subscriber);
    subscriber.start();
  }
}
