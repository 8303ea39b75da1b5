package io.breakwater.agent;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;

/**
 * Signalled when a task has used every step of its {@link TaskBudget} ({@code maxSteps}): each {@link Tool#call}
 * is one step. A {@link FailureKind#BUDGET_EXHAUSTED}: not retried, no fallback runs; the task should answer with
 * what it has.
 *
 * <pre>{@code
 * tool.call(args).onErrorResume(StepBudgetExhaustedException.class, e -> Mono.just(partialAnswer));
 * }</pre>
 */
public final class StepBudgetExhaustedException extends RuntimeException implements BreakwaterException {

  private static final long serialVersionUID = 1L;

  private final String task;
  private final int maxSteps;

  public StepBudgetExhaustedException(String task, int maxSteps) {
    super("Task '" + task + "' used all of its " + maxSteps + " steps: answer with what you have");
    this.task = task;
    this.maxSteps = maxSteps;
  }

  /** The name of the task whose budget ran out. */
  @Override
  public String source() {
    return task;
  }

  @Override
  public FailureKind failureKind() {
    return FailureKind.BUDGET_EXHAUSTED;
  }

  /** The steps the task was given. */
  public int maxSteps() {
    return maxSteps;
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
