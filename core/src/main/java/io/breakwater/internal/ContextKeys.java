package io.breakwater.internal;

/**
 * The private keys under which Breakwater keeps its state in the Reactor {@code Context}. Not API: read the values
 * through their public types (e.g. {@link io.breakwater.deadline.Deadline#from}).
 */
public final class ContextKeys {

  private ContextKeys() {}

  /** The {@link io.breakwater.deadline.Deadline} in force. */
  public static final Object DEADLINE = new Key("breakwater.deadline");

  /** The {@link io.breakwater.idempotency.SideEffect} declared for the call. */
  public static final Object SIDE_EFFECT = new Key("breakwater.sideEffect");

  /**
   * Present while a call runs inside {@code idempotentBy}: its value is the idempotency key held. A retry of a
   * {@code NON_IDEMPOTENT_WRITE} is allowed only when it is present.
   */
  public static final Object IDEMPOTENCY_KEY = new Key("breakwater.idempotencyKey");

  /**
   * Present with {@link #IDEMPOTENCY_KEY}: the key as dependencies are sent it (a {@code String}, the policy's
   * {@code sentKey}), read by {@link io.breakwater.http.IdempotencyKeyHeader}.
   */
  public static final Object IDEMPOTENCY_SENT_KEY = new Key("breakwater.idempotencySentKey");

  /** The {@link io.breakwater.idempotency.IdempotencyContext} of the owner running inside {@code idempotentBy}. */
  public static final Object IDEMPOTENCY_CONTEXT = new Key("breakwater.idempotencyContext");

  /** The {@link io.breakwater.retry.TaskRetryBudget} shared by every retry of the task. */
  public static final Object TASK_RETRY_BUDGET = new Key("breakwater.taskRetryBudget");

  /** The position a resumed stream should continue after (see {@link io.breakwater.retry.StreamResume}). */
  public static final Object RESUME_POSITION = new Key("breakwater.resumePosition");

  /** The per-task state of {@code withTaskBudget}: steps, tokens, tool failures (an internal TaskState). */
  public static final Object TASK_STATE = new Key("breakwater.taskState");

  /**
   * Present in the Context of every attempt of a {@code hedgedBy}: a {@code hedgedBy} that finds it hedges nothing,
   * so nested hedges do not multiply.
   */
  public static final Object HEDGED = new Key("breakwater.hedged");

  /**
   * In the Context of a store call that its caller already bounds in time: the {@link java.time.Duration} of that
   * bound, armed when the call is subscribed. A store that would bound the call by a limit no shorter need not arm a
   * timer of its own.
   */
  public static final Object STORE_CALL_BOUND = new Key("breakwater.storeCallBound");

  private record Key(String name) {
    @Override
    public String toString() {
      return name;
    }
  }
}
