package io.breakwater.internal.retry;

import io.breakwater.deadline.Deadline;
import io.breakwater.internal.ContextKeys;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.TaskRetryBudget;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * Retries a {@code Mono}. On the success path it is the only object allocated: it relays the item and completion,
 * and touches no timer, no list and no Reactor retry machinery. On a failure it asks a {@link RetryState}, made
 * then, for a {@code Mono} that either emits when the next attempt may start (it then subscribes to the source
 * again, from the timer's thread) or fails with the error to give the subscriber.
 *
 * <p>Demand: a {@code Mono} needs only to know that the subscriber asked for something, so each attempt is
 * requested {@code Long.MAX_VALUE} once downstream has requested. The request flag and the current upstream are
 * both volatile, so a request racing with a new attempt reaches at least one of them (perhaps both: a repeated
 * request is harmless).
 */
final class RetryMonoSubscriber<T> implements CoreSubscriber<T>, Subscription, Scannable {

  private final CoreSubscriber<? super T> actual;
  private final Mono<T> source;
  private final RetryOperator<T> operator;
  private final Context context;
  @Nullable
  private final Deadline deadline;
  @Nullable
  private final TaskRetryBudget task;
  private final Scheduler scheduler;
  private final RetryBudget budget;

  private volatile @Nullable Subscription upstream;
  private volatile boolean requested;
  private volatile boolean cancelled;
  @Nullable private volatile Disposable waiting;
  private boolean emitted;
  private @Nullable RetryState state;

  RetryMonoSubscriber(CoreSubscriber<? super T> actual, Mono<T> source, RetryOperator<T> operator) {
    this.actual = actual;
    this.source = source;
    this.operator = operator;
    this.context = actual.currentContext();
    this.deadline = context.getOrDefault(ContextKeys.DEADLINE, null);
    this.task = context.getOrDefault(ContextKeys.TASK_RETRY_BUDGET, null);
    this.scheduler = operator.schedulerFor(deadline);
    this.budget = operator.admit(scheduler);
  }

  @Override
  public Context currentContext() {
    return context;
  }

  @Override
  public void onSubscribe(Subscription s) {
    if (!Operators.validate(upstream, s)) {
      return;   // a second subscription while an attempt runs (rule 2.5): validate cancelled it
    }
    upstream = s;
    if (cancelled) {
      s.cancel();
    } else if (requested) {
      s.request(Long.MAX_VALUE);
    }
  }

  @Override
  public void onNext(T t) {
    if (t == null) {
      throw new NullPointerException("onNext(null) in " + operatorName() + ": Reactive Streams rule 2.13");
    }
    emitted = true;
    actual.onNext(t);
  }

  @Override
  public void onComplete() {
    budget.onSuccess();
    actual.onComplete();
  }

  @Override
  public void onError(Throwable t) {
    if (t == null) {
      throw new NullPointerException("onError(null) in " + operatorName() + ": Reactive Streams rule 2.13");
    }
    if (cancelled) {
      Operators.onErrorDropped(t, context);   // the subscriber left: not a failure to report, nor to lose silently
      return;
    }
    if (emitted) {
      actual.onError(t);
      return;
    }
    upstream = null;   // this attempt is over: the next one brings its own subscription
    if (state == null) {
      state = operator.newState(deadline, task, scheduler, budget, context);
    }
    Wait wait = new Wait();
    waiting = wait;   // before subscribing: a cancel from now on reaches it
    if (cancelled) {
      wait.dispose();
      return;
    }
    state.next(t, false, false).subscribe(wait);
  }

  /** Whether the subscriber left; then no attempt may be subscribed. */
  boolean isCancelled() {
    return cancelled;
  }

  @Override
  public void request(long n) {
    if (Operators.validate(n)) {
      requested = true;
      Subscription s = upstream;
      if (s != null) {
        s.request(n);
      }
    }
  }

  @Override
  public void cancel() {
    cancelled = true;
    Disposable w = waiting;
    if (w != null) {
      w.dispose();
    }
    Subscription s = upstream;
    if (s != null) {
      s.cancel();
    }
  }

  @Override
  @Nullable
  public Object scanUnsafe(Attr key) {
    if (key == Attr.PARENT) {
      return upstream;
    }
    if (key == Attr.ACTUAL) {
      return actual;
    }
    if (key == Attr.CANCELLED) {
      return cancelled;
    }
    if (key == Attr.RUN_STYLE) {
      return Attr.RunStyle.SYNC;
    }
    if (key == Attr.NAME) {
      return operatorName();
    }
    return null;
  }

  private String operatorName() {
    return "retryWithBudget(" + operator.policy.name() + ")";
  }

  /**
   * Waits for the decision about a failure: a delay whose end starts the next attempt, or the error to give the
   * subscriber. Reactor's {@code BaseSubscriber} does the protocol; it exists before it subscribes, so a cancel
   * racing the decision always finds it.
   */
  private final class Wait extends BaseSubscriber<Long> {

    @Override
    public Context currentContext() {
      return context;
    }

    @Override
    protected void hookOnError(Throwable error) {
      waiting = null;
      if (!cancelled) {
        actual.onError(error);
      }
    }

    @Override
    protected void hookOnComplete() {
      waiting = null;
      if (!cancelled) {
        source.subscribe(RetryMonoSubscriber.this);
      }
    }
  }
}
