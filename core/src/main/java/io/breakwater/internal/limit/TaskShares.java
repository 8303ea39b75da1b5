package io.breakwater.internal.limit;

import io.breakwater.internal.ContextKeys;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.LimitExceededException.Reason;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Objects;
import reactor.util.context.ContextView;

/**
 * How many calls each task has waiting in a limit's queue, so that one task cannot take more than its share of the
 * queue and lock the other tasks out. Calls made outside any task are not one tenant: only the limit's
 * {@code maxQueue} bounds them. Not thread-safe: its owner guards it.
 */
public final class TaskShares {

  /** The share a setting of this value stands for: half the queue, at least one call. */
  public static final int DEFAULT_SHARE = -1;

  /** The flow of calls made outside any task. */
  static final Object NO_TASK = new Object();

  private final int maxPerTask;
  private final Map<Object, Integer> waiting = new IdentityHashMap<>();

  TaskShares(int maxPerTask) {
    this.maxPerTask = maxPerTask;
  }

  /** The task of the call subscribed with {@code ctx} (its state in the context), or {@link #NO_TASK}. */
  static Object taskOf(ContextView ctx) {
    return Objects.requireNonNull(ctx.getOrDefault(ContextKeys.TASK_STATE, NO_TASK));   // default non-null
  }

  /**
   * The validated share of the queue one task may hold ({@link #DEFAULT_SHARE}: half of {@code maxQueue}, at least
   * one); {@code limit} names the limit in the message.
   */
  static int check(String limit, int maxQueuePerTask, int maxQueue) {
    if (maxQueuePerTask == DEFAULT_SHARE) {
      return Math.max(1, maxQueue / 2);
    }
    if (maxQueuePerTask < 1 || maxQueuePerTask > Math.max(1, maxQueue)) {
      throw new IllegalArgumentException(limit + " maxQueuePerTask is " + maxQueuePerTask + ": give 1 to maxQueue ("
          + maxQueue + ") calls, the most one task may have waiting at once");
    }
    return maxQueuePerTask;
  }

  /** Whether {@code task} already has its share of the queue waiting. */
  boolean full(Object task) {
    return task != NO_TASK && waiting.getOrDefault(task, 0) >= maxPerTask;
  }

  /** The refusal of a call whose task already has {@code maxPerTask} calls waiting in limit {@code name}'s queue. */
  static LimitExceededException full(String name, int maxPerTask, int maxQueue) {
    return new LimitExceededException(name, Reason.QUEUE_FULL, null, "its task already has " + maxPerTask
        + " calls waiting, its share of the " + maxQueue + " the queue holds (maxQueuePerTask)");
  }

  void joined(Object task) {
    if (task != NO_TASK) {
      waiting.merge(task, 1, Integer::sum);
    }
  }

  void left(Object task) {
    if (task != NO_TASK) {
      waiting.computeIfPresent(task, (t, n) -> n == 1 ? null : n - 1);
    }
  }
}
