package io.breakwater.retry;

import io.breakwater.internal.ContextKeys;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import reactor.util.context.ContextView;

/**
 * The retries a whole task may make, shared by every {@code retryWithBudget} inside it, set with
 * {@link io.breakwater.Breakwater#withRetryBudget(int)} and carried in the Reactor Context:
 *
 * <pre>{@code
 * agentTask   // makes many tool calls, each with its own retryWithBudget(..)
 *     .transformDeferred(withRetryBudget(5));   // at most 5 retries for the whole task
 * }</pre>
 *
 * <p>A budget nested in another draws on both, so nesting only tightens. It is created at subscription, so one
 * operator can be shared by many tasks. Thread-safe.
 */
public final class TaskRetryBudget {

  private final int limit;
  private final AtomicInteger remaining;
  @Nullable
  private final TaskRetryBudget parent;

  /** A budget of {@code limit} retries that also draws on {@code parent}, if any. */
  public TaskRetryBudget(int limit, @Nullable TaskRetryBudget parent) {
    if (limit < 0) {
      throw new IllegalArgumentException("Task retry budget is " + limit + ": give zero or more retries");
    }
    this.limit = limit;
    this.remaining = new AtomicInteger(limit);
    this.parent = parent;
  }

  /** The task budget in force in {@code context}, if any. */
  public static Optional<TaskRetryBudget> from(ContextView context) {
    return Optional.ofNullable(context.getOrDefault(ContextKeys.TASK_RETRY_BUDGET, null));
  }

  /** The retries this budget was given. */
  public int limit() {
    return limit;
  }

  /** The retries still allowed: the least of this budget's and its parents'. */
  public int remaining() {
    int own = Math.max(0, remaining.get());
    return parent == null ? own : Math.min(own, parent.remaining());
  }

  /** Takes one retry from this budget and its parents; {@code false}, taking nothing, if any of them is used up. */
  public boolean tryAcquire() {
    if (remaining.getAndDecrement() <= 0) {
      remaining.incrementAndGet();
      return false;
    }
    if (parent != null && !parent.tryAcquire()) {
      remaining.incrementAndGet();
      return false;
    }
    return true;
  }

  /** Gives back a retry taken by {@link #tryAcquire()} that was not made after all. */
  public void release() {
    remaining.incrementAndGet();
    if (parent != null) {
      parent.release();
    }
  }

  @Override
  public String toString() {
    return "TaskRetryBudget{" + remaining() + " of " + limit + " left}";
  }
}
