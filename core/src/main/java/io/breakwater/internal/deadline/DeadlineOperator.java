package io.breakwater.internal.deadline;

import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.internal.AssemblyCache;
import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.Lift;
import io.breakwater.internal.Saturating;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * {@code withDeadline} and {@code perCallTimeout}: a {@code Mono} stays a {@code Mono}, anything else becomes a
 * {@code Flux}. The function is stateless and can be shared; each subscription starts its own deadline.
 */
public final class DeadlineOperator<T> implements Function<Publisher<T>, Publisher<T>>, Lift.OnSubscribe<T> {

  /** Decides, at subscription, which deadline to impose under the one in force. */
  @FunctionalInterface
  interface Bound {
    /**
     * The deadline to impose, or {@code null} when {@code outer} (present and not yet passed) is at least as tight,
     * so that the outer operator enforces it and this one adds nothing: no timer, no wrapper.
     *
     * @param outerRemaining {@code outer}'s remaining time, read once for the whole decision (0 without one)
     * @param now the instant on {@code outer}'s clock that {@code outerRemaining} was read at (0 without one)
     */
    @Nullable
    Deadline under(@Nullable Deadline outer, long outerRemaining, long now);
  }

  private static final DeadlineSpec DEFAULT_DERIVATION = DeadlineSpec.of(Duration.ZERO);

  private final Bound bound;

  private DeadlineOperator(Bound bound) {
    this.bound = bound;
  }

  /** {@code perCallTimeout()}: one operator for every call that asks for it. */
  private static final DeadlineOperator<?> PER_CALL = perCall(DeadlineSpec.DEFAULT_PER_CALL_CAP);

  /** {@code withDeadline(budget)} with every other setting at its default, one operator per budget. */
  private static final AssemblyCache<Duration, DeadlineOperator<?>> TASKS =
      new AssemblyCache<>(budget -> task(DeadlineSpec.of(budget)));

  /** A task deadline of {@code spec.budget()}, unless an earlier one is in force. */
  public static <T> DeadlineOperator<T> task(DeadlineSpec spec) {
    long budgetNanos = Saturating.nanos(spec.budget());
    return new DeadlineOperator<>((outer, outerRemaining, now) -> outer != null && outerRemaining <= budgetNanos
        ? null
        : Deadline.start(spec, spec.scheduler().get()));
  }

  /**
   * {@link #task(DeadlineSpec)} of {@code DeadlineSpec.of(budget)}: the same operator for equal budgets, so that a
   * chain built per call makes no operator and no spec.
   */
  @SuppressWarnings("unchecked")   // the operator holds no T
  public static <T> DeadlineOperator<T> task(Duration budget) {
    return (DeadlineOperator<T>) TASKS.get(budget);
  }

  /** {@link #perCall(Duration)} with the default cap ({@link DeadlineSpec#DEFAULT_PER_CALL_CAP}), made once. */
  @SuppressWarnings("unchecked")   // the operator holds no T
  public static <T> DeadlineOperator<T> perCall() {
    return (DeadlineOperator<T>) PER_CALL;
  }

  /**
   * A per-call deadline of min({@code max}, the per-call budget of the deadline in force); {@code max} alone when
   * no deadline is in force.
   */
  public static <T> DeadlineOperator<T> perCall(Duration max) {
    return perCall(max, Schedulers::parallel);
  }

  /** {@link #perCall(Duration)}, timed by {@code clock} (resolved at subscription) when no deadline is in force. */
  public static <T> DeadlineOperator<T> perCall(Duration max, Supplier<Scheduler> clock) {
    return perCall(UNNAMED_CALL, max, clock);
  }

  /** The name of a per-call deadline nobody named ({@code perCallTimeout()}); its timeouts say "A call". */
  public static final String UNNAMED_CALL = "per-call";

  /**
   * {@link #perCall(Duration, Supplier)} for calls to {@code name} (a tool, a dependency): its timeouts name it.
   */
  public static <T> DeadlineOperator<T> perCall(String name, Duration max, Supplier<Scheduler> clock) {
    long maxNanos = Saturating.nanos(max);
    return new DeadlineOperator<>((outer, outerRemaining, now) -> {
      if (outer == null) {
        return Deadline.startCall(name, max, DEFAULT_DERIVATION, clock.get());
      }
      long budget = Math.min(maxNanos, perCallNanos(outer, outerRemaining));
      return outerRemaining <= budget
          ? null
          : Deadline.startCall(name, Duration.ofNanos(budget), outer.spec(), outer.scheduler(), now);
    });
  }

  /** {@link Deadline#perCallNanos()} for {@code remaining} already read: a clock read less per nested deadline. */
  private static long perCallNanos(Deadline outer, long remaining) {
    long left = Math.max(0L, remaining);
    long share = outer.isCall() ? left : (long) (left * outer.spec().perCallFraction());
    return Math.min(share, Saturating.nanos(outer.spec().perCallCap()));
  }

  @Override
  public Publisher<T> apply(Publisher<T> source) {
    return Lift.apply(source, "withDeadline", this);
  }

  @Override
  public void subscribe(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono) {
    subscribe(source, bound, actual, mono);
  }

  static <T> void subscribe(Publisher<? extends T> source, Bound bound, CoreSubscriber<? super T> actual,
      boolean mono) {
    Context context = actual.currentContext();
    Deadline outer = context.getOrDefault(ContextKeys.DEADLINE, null);
    DeadlineSubscriber<?> shared = null;
    long now = 0L;
    long outerRemaining = 0L;
    if (outer != null) {
      shared = DeadlineSubscriber.sharedTimer(context, outer.scheduler());
      long startedWith = shared == null ? TimerWheel.NONE : shared.startIfSubscribingHere();
      now = startedWith != TimerWheel.NONE ? startedWith : outer.scheduler().now(TimeUnit.NANOSECONDS);
      outerRemaining = outer.expiresAtNanos() - now;
      if (outerRemaining <= 0) {
        Operators.error(actual, outer.exceeded());
        return;
      }
    }
    Deadline deadline = bound.under(outer, outerRemaining, now);
    if (deadline == null) {
      Lift.subscribeUpstream(source, actual);
      return;
    }
    long budgetNanos = Saturating.nanos(deadline.budget());
    if (budgetNanos <= 0) {   // it has just started: no need to read the clock again
      Operators.error(actual, deadline.exceeded());
      return;
    }
    DeadlineSubscriber<T> subscriber = new DeadlineSubscriber<>(actual, deadline, budgetNanos, mono,
        shared != null && shared.deadline().scheduler() == deadline.scheduler() ? shared : null);
    if (Hooks.isAutomaticContextPropagationEnabled()) {
      // Reactor restores thread-locals only where contextWrite changes the Context, so go through it: blocking code
      // upstream (e.g. on boundedElastic) then sees the deadline through Deadline.current().
      Flux.from(source).contextWrite(Context.of(ContextKeys.DEADLINE, deadline)).subscribe(subscriber);
    } else {
      Lift.subscribeUpstream(source, subscriber);
    }
    subscriber.sourceReturned();
  }
}
