package io.breakwater.agent;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.RuntimeFailure;

/**
 * Signalled by {@link TaskBudget#spendTokens(long)} when the tokens a task has spent pass its {@link TaskBudget}'s
 * token budget. A {@link FailureKind#BUDGET_EXHAUSTED}: not retried, no fallback runs.
 *
 * <pre>{@code
 * llm.complete(prompt)
 *     .flatMap(reply -> TaskBudget.spendTokens(reply.usage().totalTokens()).thenReturn(reply));
 * }</pre>
 */
public final class TokenBudgetExhaustedException extends RuntimeFailure {

  private static final long serialVersionUID = 1L;

  private final long limit;
  private final long spent;

  public TokenBudgetExhaustedException(String task, long limit, long spent) {
    super(task, FailureKind.BUDGET_EXHAUSTED, "Task '" + task + "' spent " + spent + " tokens of its " + limit
        + ": answer with what you have", null);
    this.limit = limit;
    this.spent = spent;
  }

  /** The tokens the task was given. */
  public long limit() {
    return limit;
  }

  /** The tokens spent when the budget was found exhausted (more than {@link #limit()}). */
  public long spent() {
    return spent;
  }
}
