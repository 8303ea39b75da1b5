package io.breakwater.agent;

import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.agent.TaskState;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.ContextView;

/**
 * Everything one agent task may spend: a deadline, a number of retries, a number of steps (tool calls) and a number
 * of tokens. Apply it with {@link io.breakwater.Breakwater#withTaskBudget(TaskBudget)}; every {@link Tool} called
 * inside draws on it, and the model can be shown what is left.
 *
 * <pre>{@code
 * TaskBudget budget = TaskBudget.builder(Duration.ofSeconds(30)).name("plan-trip")
 *     .retries(5).maxSteps(20).tokens(50_000).build();
 * Mono<Answer> answer = agent.run(question).transformDeferred(withTaskBudget(budget));
 * // inside the task:
 * Mono.deferContextual(ctx -> llm.prompt(history, TaskBudget.remaining(ctx).render()));
 * }</pre>
 *
 * <table>
 *   <caption>What runs out, and what then happens</caption>
 *   <tr><th>budget</th><th>is</th><th>when used up</th></tr>
 *   <tr><td>deadline</td><td>a {@code withDeadline}</td><td>{@link io.breakwater.deadline.DeadlineExceededException}
 *       </td></tr>
 *   <tr><td>retries</td><td>a {@code withRetryBudget}</td><td>retries stop; the last real error is signalled as a
 *       {@link io.breakwater.retry.RetryExhaustedException} ({@code TASK_BUDGET})</td></tr>
 *   <tr><td>steps</td><td>one per {@link Tool#call}</td><td>{@link StepBudgetExhaustedException}</td></tr>
 *   <tr><td>tokens</td><td>spent with {@link #spendTokens(long)}</td><td>{@link TokenBudgetExhaustedException}</td>
 *       </tr>
 * </table>
 *
 * <p>Retries, steps and tokens are unlimited unless set. The counters are created at each subscription, so one
 * budget (and one operator) serves many tasks; nested budgets only tighten (a step or token taken inside draws on
 * every budget in force). Immutable and thread-safe.
 */
public final class TaskBudget {

  /** The value of an unlimited count in {@link RemainingBudget}. */
  public static final int UNLIMITED = -1;

  private final DeadlineSpec deadline;
  private final int retries;
  private final int maxSteps;
  private final long tokens;

  private TaskBudget(Builder b) {
    this.deadline = b.deadline.toBuilder().name(b.name != null ? b.name : b.deadline.name())
        .scheduler(b.scheduler != null ? b.scheduler : b.deadline.scheduler()).build();
    this.retries = b.retries;
    this.maxSteps = b.maxSteps;
    this.tokens = b.tokens;
  }

  /** A budget with a deadline of {@code deadline} from subscription. */
  public static Builder builder(Duration deadline) {
    return new Builder(DeadlineSpec.builder(Objects.requireNonNull(deadline, "deadline")).name("task").build());
  }

  /** A budget whose deadline is {@code deadline}, with its per-call and idle derivations. */
  public static Builder builder(DeadlineSpec deadline) {
    return new Builder(Objects.requireNonNull(deadline, "deadline"));
  }

  /** The task's name: the deadline's name, used in messages and events. */
  public String name() {
    return deadline.name();
  }

  /** The deadline, as a {@code withDeadline} spec. */
  public DeadlineSpec deadline() {
    return deadline;
  }

  /** The retries the task may make, or {@link #UNLIMITED}. */
  public int retries() {
    return retries;
  }

  /** The tool calls the task may make, or {@link #UNLIMITED}. */
  public int maxSteps() {
    return maxSteps;
  }

  /** The tokens the task may spend, or {@link #UNLIMITED}. */
  public long tokens() {
    return tokens;
  }

  /**
   * What the task in {@code context} has left; every count {@link #UNLIMITED} and no time outside a task. Cheap
   * enough to call before every model turn.
   */
  public static RemainingBudget remaining(ContextView context) {
    return TaskState.remaining(context);
  }

  /**
   * Records {@code tokens} spent by the task in force (e.g. a model reply's usage) and emits what is left; fails with
   * {@link TokenBudgetExhaustedException} once the total passes the budget. Outside a task it records nothing.
   */
  public static Mono<RemainingBudget> spendTokens(long tokens) {
    if (tokens < 0) {
      return Mono.error(new IllegalArgumentException("spendTokens(" + tokens + "): give zero or more tokens"));
    }
    return Mono.deferContextual(ctx -> {
      TaskState state = ctx.getOrDefault(ContextKeys.TASK_STATE, null);
      if (state != null) {
        TokenBudgetExhaustedException exhausted = state.spendTokens(tokens);
        if (exhausted != null) {
          return Mono.error(exhausted);
        }
      }
      return Mono.just(TaskState.remaining(ctx));
    });
  }

  @Override
  public String toString() {
    return "TaskBudget{" + name() + ", deadline=" + deadline.budget() + ", retries=" + count(retries) + ", steps="
        + count(maxSteps) + ", tokens=" + (tokens == UNLIMITED ? "unlimited" : tokens) + "}";
  }

  private static String count(int n) {
    return n == UNLIMITED ? "unlimited" : Integer.toString(n);
  }

  /** Builds a {@link TaskBudget}; {@link #build()} validates and says what to change. */
  public static final class Builder {
    private final DeadlineSpec deadline;
    private @Nullable String name;
    private @Nullable Supplier<Scheduler> scheduler;
    private int retries = UNLIMITED;
    private int maxSteps = UNLIMITED;
    private long tokens = UNLIMITED;

    private Builder(DeadlineSpec deadline) {
      this.deadline = deadline;
    }

    /** The task's name (a metric tag and log field, so never user data). Default {@code "task"}. */
    public Builder name(String name) {
      this.name = Objects.requireNonNull(name, "name");
      return this;
    }

    /** The deadline's clock; default the deadline spec's ({@code Schedulers::parallel}). */
    public Builder scheduler(Supplier<Scheduler> scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /** At most {@code retries} retries for all the task's tool calls together. Default unlimited. */
    public Builder retries(int retries) {
      this.retries = retries;
      return this;
    }

    /** At most {@code maxSteps} tool calls. Default unlimited. */
    public Builder maxSteps(int maxSteps) {
      this.maxSteps = maxSteps;
      return this;
    }

    /** At most {@code tokens} tokens spent through {@link TaskBudget#spendTokens(long)}. Default unlimited. */
    public Builder tokens(long tokens) {
      this.tokens = tokens;
      return this;
    }

    public TaskBudget build() {
      if (name != null && name.isBlank()) {
        throw new IllegalArgumentException("Task budget name is blank: name it after the task, e.g. \"plan-trip\"");
      }
      if (retries < UNLIMITED) {
        throw new IllegalArgumentException("retries is " + retries + ": give zero or more (or leave it unset)");
      }
      if (maxSteps == 0 || maxSteps < UNLIMITED) {
        throw new IllegalArgumentException("maxSteps is " + maxSteps + ": give one or more (or leave it unset)");
      }
      if (tokens == 0 || tokens < UNLIMITED) {
        throw new IllegalArgumentException("tokens is " + tokens + ": give one or more (or leave it unset)");
      }
      return new TaskBudget(this);
    }
  }
}
