package io.breakwater.internal.retry;

import io.breakwater.deadline.Deadline;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.internal.ContextKeys;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.retry.StreamResume;
import io.breakwater.retry.TaskRetryBudget;
import io.breakwater.retry.UnsafeRetryException;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoOperator;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.ContextView;
import reactor.util.retry.Retry;

/**
 * {@code retryWithBudget}: a {@code Mono} gets a hand-written subscriber that costs one object on the success path;
 * a {@code Flux} goes through Reactor's {@code retryWhen} (which does the demand accounting across attempts), with
 * the same decisions. The function is stateless and can be shared; each subscription gets its own state. Making
 * one costs two small objects (pipelines are often assembled per call), registering nothing.
 */
public final class RetryOperator<T> implements Function<Publisher<T>, Publisher<T>> {

  final RetryPolicy policy;
  final RetryMetrics metrics;
  @Nullable
  private final StreamResume<T> resume;

  public RetryOperator(RetryPolicy policy, @Nullable StreamResume<T> resume) {
    this.policy = policy;
    this.resume = resume;
    this.metrics = new RetryMetrics(policy);
  }

  @Override
  public Publisher<T> apply(Publisher<T> source) {
    if (source instanceof Mono<T> mono) {
      return new MonoRetry<>(mono, this);
    }
    Flux<T> flux = Flux.from(source);
    return Flux.deferContextual(ctx -> subscribeFlux(flux, ctx));
  }

  /** The refusal of an unsafe retry: a write that must not be sent twice, and no idempotency key to guard it. */
  @Nullable
  Throwable refusal(ContextView ctx) {
    Object declared = ctx.getOrDefault(ContextKeys.SIDE_EFFECT, null);
    if ((declared == SideEffect.NON_IDEMPOTENT_WRITE || declared == SideEffect.DEDUPLICATED_WRITE)
        && !ctx.hasKey(ContextKeys.IDEMPOTENCY_KEY)) {
      return new UnsafeRetryException(policy.name());
    }
    return null;
  }

  /** The budget of this subscription's dependency, with the call counted in it. */
  RetryBudget admit(Scheduler scheduler) {
    RetryBudget budget = policy.budget(scheduler);
    budget.onRequest();
    return budget;
  }

  RetryState newState(@Nullable Deadline deadline, @Nullable TaskRetryBudget task, Scheduler scheduler,
      RetryBudget budget, ContextView ctx) {
    return new RetryState(this, deadline, task, scheduler, budget, ctx);
  }

  Scheduler schedulerFor(@Nullable Deadline deadline) {
    return deadline != null ? deadline.scheduler() : policy.scheduler().get();
  }

  private Flux<T> subscribeFlux(Flux<T> source, ContextView ctx) {
    Throwable refused = refusal(ctx);
    if (refused != null) {
      return Flux.error(refused);
    }
    Deadline deadline = ctx.getOrDefault(ContextKeys.DEADLINE, null);
    Scheduler scheduler = schedulerFor(deadline);
    RetryBudget budget = admit(scheduler);
    RetryState state = newState(deadline, ctx.getOrDefault(ContextKeys.TASK_RETRY_BUDGET, null), scheduler, budget,
        ctx);
    if (resume != null) {
      ResumeTracker<T> tracker = new ResumeTracker<>(resume);
      return Flux.defer(() -> tracker.attempt(source)).retryWhen(Retry.from(signals -> signals.concatMap(
          signal -> state.next(signal.failure(), tracker.delivered(), true))))
          .doOnComplete(budget::onSuccess);
    }
    EmittedFlag emitted = new EmittedFlag();
    return source.doOnNext(item -> emitted.value = true).retryWhen(Retry.from(signals -> signals.concatMap(
        signal -> state.next(signal.failure(), emitted.value, false))))
        .doOnComplete(budget::onSuccess);
  }

  /** Whether a stream delivered anything, in any attempt: retrying it then would duplicate output. */
  private static final class EmittedFlag {
    boolean value;
  }

  static final class MonoRetry<T> extends MonoOperator<T, T> {
    private final RetryOperator<T> operator;

    MonoRetry(Mono<? extends T> source, RetryOperator<T> operator) {
      super(source);
      this.operator = operator;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void subscribe(CoreSubscriber<? super T> actual) {
      ContextView ctx = actual.currentContext();
      Throwable refused = operator.refusal(ctx);
      if (refused != null) {
        Operators.error(actual, refused);
        return;
      }
      RetryMonoSubscriber<T> subscriber = new RetryMonoSubscriber<>(actual, (Mono<T>) source, operator);
      actual.onSubscribe(subscriber);
      if (!subscriber.isCancelled()) {   // a subscriber that left inside onSubscribe makes no call
        source.subscribe(subscriber);
      }
    }
  }
}
