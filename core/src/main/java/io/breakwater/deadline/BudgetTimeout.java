package io.breakwater.deadline;

import io.breakwater.failure.FailureKind;
import io.breakwater.internal.failure.TimeoutFailure;
import java.time.Duration;

/** A time budget that ran out, a deadline's or one call's: the budget it was given and how much of it was used. */
abstract class BudgetTimeout extends TimeoutFailure {

  private static final long serialVersionUID = 1L;

  private final Duration budget;
  private final Duration used;

  BudgetTimeout(String source, FailureKind kind, String message, Duration budget, Duration used) {
    super(source, kind, message, null);
    this.budget = budget;
    this.used = used;
  }

  /** The budget it was given: the deadline's, or the call's per-call budget. */
  public Duration budget() {
    return budget;
  }

  /** How much of the budget had been used when it was found spent (may exceed the budget). */
  public Duration used() {
    return used;
  }
}
