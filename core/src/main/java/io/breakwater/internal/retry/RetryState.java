package io.breakwater.internal.retry;

import io.breakwater.deadline.Deadline;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.Retryability;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.failure.CompositeFailures;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryAttempt;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.retry.RetryStopReason;
import io.breakwater.retry.TaskRetryBudget;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The retry decisions of one subscription, made on the failure path only. Failures of one subscription are
 * sequential (the next attempt starts after the decision about the last one), so the fields need no
 * synchronisation.
 */
final class RetryState {

  private final RetryOperator<?> operator;
  private final RetryPolicy policy;
  @Nullable
  private final Deadline deadline;
  @Nullable
  private final TaskRetryBudget task;
  private final Scheduler scheduler;

  private @Nullable RandomGenerator random;
  private int retries;
  private boolean unknownRetried;
  private long delayBeforeAttemptNanos;
  private final List<RetryAttempt> attempts = new ArrayList<>(4);

  RetryState(RetryOperator<?> operator, @Nullable Deadline deadline, @Nullable TaskRetryBudget task,
      Scheduler scheduler) {
    this.operator = operator;
    this.policy = operator.policy;
    this.deadline = deadline;
    this.task = task;
    this.scheduler = scheduler;
  }

  /**
   * What to do after {@code failure}: a {@code Mono} that emits when the next attempt may start, or fails with the
   * error to give the subscriber.
   *
   * @param emitted whether the failed attempt's stream delivered items
   * @param resumable whether a stream that delivered items may be resumed
   */
  Mono<Long> next(Throwable failure, boolean emitted, boolean resumable) {
    if (CompositeFailures.any(failure, RetryExhaustedException.class::isInstance)) {
      return Mono.error(failure);   // an inner retry already spent what this failure (or a part of it) deserved
    }
    FailureKind kind = CompositeFailures.classify(policy.classifier(), failure);
    long nowMillis = scheduler.now(TimeUnit.MILLISECONDS);
    attempts.add(new RetryAttempt(attempts.size() + 1, kind, Duration.ofNanos(delayBeforeAttemptNanos),
        Instant.ofEpochMilli(nowMillis), failure));

    RetryStopReason stop = null;
    Retryability retryability = kind.retryability();
    if (retryability == Retryability.NON_RETRYABLE
        || (retryability == Retryability.UNKNOWN && unknownRetried)) {
      stop = RetryStopReason.NON_RETRYABLE;
    }
    if (stop == null && RetryAfter.forbidsRetry(failure)) {
      stop = RetryStopReason.SHOULD_NOT_RETRY;
    }
    if (stop == null && emitted && !resumable) {
      stop = RetryStopReason.ALREADY_EMITTED;
    }
    if (stop == null && retries >= policy.maxRetries()) {
      stop = RetryStopReason.MAX_RETRIES;
    }
    long delay = 0L;
    if (stop == null) {
      long hinted = RetryAfter.hintNanos(failure, nowMillis, Saturating.nanos(policy.retryAfterCap()));
      delay = hinted != RetryAfter.NONE ? hinted : backoffNanos(kind);
      if (deadline != null
          && Saturating.add(delay, Saturating.nanos(policy.minAttemptTime())) > deadline.remainingNanos()) {
        stop = hinted != RetryAfter.NONE ? RetryStopReason.RETRY_AFTER_BEYOND_DEADLINE : RetryStopReason.DEADLINE;
      }
    }
    if (stop == null && task != null && !task.tryAcquire()) {
      stop = RetryStopReason.TASK_BUDGET;
    }
    if (stop != null) {
      return Mono.error(stop(stop, failure));
    }
    long granted = delay;
    return policy.budget().tryAcquire(nowMillis)
        .onErrorReturn(Boolean.FALSE)
        .defaultIfEmpty(Boolean.FALSE)
        .flatMap(ok -> {
          if (!ok) {
            if (task != null) {
              task.release();
            }
            operator.metrics.budgetRefused(policy.budget());
            return Mono.error(stop(RetryStopReason.DEPENDENCY_BUDGET, failure));
          }
          retries++;
          if (retryability == Retryability.UNKNOWN) {
            unknownRetried = true;
          }
          delayBeforeAttemptNanos = granted;
          operator.metrics.retried(kind);
          return Mono.delay(Duration.ofNanos(Saturating.delayNanos(granted)), scheduler);
        });
  }

  private long backoffNanos(FailureKind kind) {
    if (random == null) {
      random = policy.random().get();
    }
    Backoff backoff = policy.backoff();
    if (kind == FailureKind.RATE_LIMITED) {
      Duration base = policy.rateLimitedBase();
      long jittered = (base.isZero() ? backoff : backoff.withBase(base))
          .delayNanos(retries, delayBeforeAttemptNanos, random);
      return Math.min(Saturating.nanos(policy.retryAfterCap()), Saturating.add(Saturating.nanos(base), jittered));
    }
    if (kind == FailureKind.TIMEOUT && !policy.timeoutBase().isZero()) {
      backoff = backoff.withBase(policy.timeoutBase());
    }
    return backoff.delayNanos(retries, delayBeforeAttemptNanos, random);
  }

  private Throwable stop(RetryStopReason reason, Throwable failure) {
    operator.metrics.rejected(reason);
    if (reason == RetryStopReason.NON_RETRYABLE && retries == 0) {
      return failure;   // the caller sees its own error: nothing was retried
    }
    return new RetryExhaustedException(policy.name(), reason, attempts);
  }
}
