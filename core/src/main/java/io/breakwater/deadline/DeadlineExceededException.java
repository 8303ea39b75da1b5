package io.breakwater.deadline;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;
import io.breakwater.internal.Durations;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * Signalled when a deadline set by {@link io.breakwater.Breakwater#withDeadline(Duration)} passes before the guarded
 * publisher terminates, or has already passed when it is subscribed.
 *
 * <p>It is a {@link TimeoutException}, so existing timeout handling keeps working. The message says which budget
 * expired and how much of it was used, e.g. {@code Deadline 'plan-trip' exceeded: 10s of 10s used}.
 *
 * <pre>{@code
 * Mono.never()
 *     .transformDeferred(withDeadline(Duration.ofSeconds(1)))
 *     .onErrorResume(DeadlineExceededException.class, e -> Mono.just(e.used()));
 * }</pre>
 */
public final class DeadlineExceededException extends TimeoutException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final String deadlineName;
  private final Duration budget;
  private final Duration used;

  /**
   * @param deadlineName the name of the deadline that expired
   * @param budget the budget it was given
   * @param used how much of it had been used when it was found expired (may exceed the budget)
   */
  public DeadlineExceededException(String deadlineName, Duration budget, Duration used) {
    this(deadlineName, budget, used, null);
  }

  /**
   * A deadline that ends a call before it has passed: too little of it is left for what would come next, e.g. another
   * attempt of a retry. The attempts' failures are added as suppressed exceptions by who raises it.
   *
   * @param detail what could not be done in the time left, or {@code null}
   */
  public DeadlineExceededException(String deadlineName, Duration budget, Duration used, @Nullable String detail) {
    super("Deadline '" + deadlineName + "' exceeded: " + Durations.format(used) + " of "
        + Durations.format(budget) + " used" + (detail == null ? "" : "; " + detail));
    this.deadlineName = deadlineName;
    this.budget = budget;
    this.used = used;
  }

  /** The name of the deadline that expired. */
  @Override
  public String source() {
    return deadlineName;
  }

  /** {@link FailureKind#DEADLINE_EXCEEDED}: no time is left for another attempt. */
  @Override
  public FailureKind failureKind() {
    return FailureKind.DEADLINE_EXCEEDED;
  }

  /** The budget the expired deadline was given. */
  public Duration budget() {
    return budget;
  }

  /** How much of the budget had been used when the deadline was found expired. */
  public Duration used() {
    return used;
  }

  /** No stack trace: it is raised by a timer, whose stack says nothing about the cause. */
  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
