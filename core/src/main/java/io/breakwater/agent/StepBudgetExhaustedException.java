package io.breakwater.agent;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.RuntimeFailure;

/**
 * Signalled when a task has used every step of its {@link TaskBudget} ({@code maxSteps}): each {@link Tool#call}
 * is one step. A {@link FailureKind#BUDGET_EXHAUSTED}: not retried, no fallback runs; the task should answer with
 * what it has.
 *
 * <pre>{@code
 * tool.call(args).onErrorResume(StepBudgetExhaustedException.class, e -> Mono.just(partialAnswer));
 * }</pre>
 */
public final class StepBudgetExhaustedException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  private final int maxSteps;

  public StepBudgetExhaustedException(String task, int maxSteps) {
    super(task, FailureKind.BUDGET_EXHAUSTED, "Task '" + task + "' used all of its " + maxSteps
        + " steps: answer with what you have", null);
    this.maxSteps = maxSteps;
  }

  /** The steps the task was given. */
  public int maxSteps() {
    return maxSteps;
  }
}
