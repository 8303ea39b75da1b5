package io.breakwater.internal.retry;

import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.Retryability;
import io.breakwater.idempotency.IdempotencyContext;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.Durations;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.failure.CompositeFailures;
import io.breakwater.internal.failure.WriteOutcome;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryAttempt;
import io.breakwater.retry.RetryBudget;
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
import reactor.util.context.ContextView;

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
  private final RetryBudget budget;
  /** What may be re-sent: the side effect in force, by {@link SideEffect}'s rule. */
  private final SideEffect sideEffect;
  /** The claim of the {@code idempotentBy} around, which counts the requests that carried its key. */
  private final @Nullable IdempotencyContext claim;

  private @Nullable RandomGenerator random;
  private int retries;
  private boolean unknownRetried;
  private long delayBeforeAttemptNanos;
  private final List<RetryAttempt> attempts = new ArrayList<>(4);

  RetryState(RetryOperator<?> operator, @Nullable Deadline deadline, @Nullable TaskRetryBudget task,
      Scheduler scheduler, RetryBudget budget, ContextView ctx) {
    this.operator = operator;
    this.policy = operator.policy;
    this.deadline = deadline;
    this.task = task;
    this.scheduler = scheduler;
    this.budget = budget;
    this.claim = ctx.getOrDefault(ContextKeys.IDEMPOTENCY_CONTEXT, null);
    SideEffect declared = ctx.getOrDefault(ContextKeys.SIDE_EFFECT, null);
    boolean keyed = ctx.hasKey(ContextKeys.IDEMPOTENCY_KEY);
    this.sideEffect = declared != null ? declared : keyed ? SideEffect.NON_IDEMPOTENT_WRITE : SideEffect.READ_ONLY;
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
    if (stop == null && mayNotResend(failure)) {
      stop = RetryStopReason.WRITE_OUTCOME_UNKNOWN;
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
      if (deadline != null && Saturating.add(delay, usefulAttemptNanos(deadline)) > deadline.remainingNanos()) {
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
    return budget.tryAcquire(nowMillis)
        .onErrorReturn(Boolean.FALSE)
        .defaultIfEmpty(Boolean.FALSE)
        .flatMap(ok -> {
          if (!ok) {
            if (task != null) {
              task.release();
            }
            operator.metrics.budgetRefused(budget);
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

  /**
   * Whether {@code failure} must not be followed by another send: a write that is not to be sent twice (or a
   * deduplicated one whose key did not go out with every attempt), after a failure that leaves open whether it was
   * processed.
   */
  private boolean mayNotResend(Throwable failure) {
    boolean guarded = switch (sideEffect) {
      case NON_IDEMPOTENT_WRITE -> true;
      case DEDUPLICATED_WRITE -> claim == null || claim.keysSent() < attempts.size();
      default -> false;
    };
    return guarded && WriteOutcome.mayHaveHappened(policy.classifier(), failure);
  }

  /** The least time worth starting an attempt with: the policy's minimum, and its share of the deadline's budget. */
  private long usefulAttemptNanos(Deadline deadline) {
    long share = (long) (Saturating.nanos(deadline.budget()) * policy.minAttemptShare());
    return Math.max(Saturating.nanos(policy.minAttemptTime()), share);
  }

  private Throwable stop(RetryStopReason reason, Throwable failure) {
    operator.metrics.rejected(reason);
    if ((reason == RetryStopReason.NON_RETRYABLE || reason == RetryStopReason.WRITE_OUTCOME_UNKNOWN)
        && retries == 0) {
      return failure;   // the caller sees its own error: nothing was retried
    }
    if (deadline != null
        && (reason == RetryStopReason.DEADLINE || reason == RetryStopReason.RETRY_AFTER_BEYOND_DEADLINE)) {
      return outOfTime(deadline, reason);
    }
    return new RetryExhaustedException(policy.name(), reason, attempts);
  }

  /** The deadline ended the call: a {@link DeadlineExceededException} that carries every attempt's failure. */
  private DeadlineExceededException outOfTime(Deadline deadline, RetryStopReason reason) {
    DeadlineExceededException exceeded = new DeadlineExceededException(deadline.name(), deadline.budget(),
        deadline.elapsed(), "'" + policy.name() + "' gave up after " + attempts.size()
            + (attempts.size() == 1 ? " attempt: " : " attempts: ")
            + (reason == RetryStopReason.DEADLINE ? "the next attempt would not start with at least "
                + Durations.format(Duration.ofNanos(usefulAttemptNanos(deadline))) + " left"
                : "Retry-After asks to wait past the deadline"));
    for (RetryAttempt attempt : attempts) {
      exceeded.addSuppressed(attempt.error());
    }
    return exceeded;
  }
}
