package io.breakwater.deadline;

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
 * expired and how much of it was used, e.g. {@code Deadline 'plan-trip' exceeded: 10s of 10s used}. Its
 * {@link #source()} is the deadline's name; its kind is {@link FailureKind#DEADLINE_EXCEEDED}: no time is left for
 * another attempt.
 *
 * <pre>{@code
 * Mono.never()
 *     .transformDeferred(withDeadline(Duration.ofSeconds(1)))
 *     .onErrorResume(DeadlineExceededException.class, e -> Mono.just(e.used()));
 * }</pre>
 */
public final class DeadlineExceededException extends BudgetTimeout {

  private static final long serialVersionUID = 1L;

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
    super(deadlineName, FailureKind.DEADLINE_EXCEEDED, "Deadline '" + deadlineName + "' exceeded: "
        + Durations.format(used) + " of " + Durations.format(budget) + " used" + (detail == null ? "" : "; " + detail),
        budget, used);
  }
}
