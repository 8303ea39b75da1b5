package io.breakwater.internal.agent;

import io.breakwater.agent.RemainingBudget;
import io.breakwater.agent.StepBudgetExhaustedException;
import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.TokenBudgetExhaustedException;
import io.breakwater.agent.ToolArgumentsRefusedException;
import io.breakwater.agent.ToolUnavailableException;
import io.breakwater.deadline.Deadline;
import io.breakwater.failure.FailureKind;
import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.Saturating;
import io.breakwater.retry.TaskRetryBudget;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.util.context.ContextView;

/**
 * The state of one task, created when {@code withTaskBudget} is subscribed and kept in the Context: steps taken,
 * tokens spent, and per tool its failures by kind, whether it is written off, and its line of failure memory.
 * Thread-safe: tools of one task may run in parallel.
 */
public final class TaskState {

  private static final FailureKind[] KINDS = FailureKind.values();
  /** Distinct refused argument sets remembered per tool and task; later ones are still counted, not remembered. */
  static final int MAX_REFUSED_ARGUMENTS = 256;

  private final String name;
  private final int maxSteps;
  private final long maxTokens;
  @Nullable
  private final TaskState parent;
  private final AtomicInteger steps = new AtomicInteger();
  private final AtomicLong tokens = new AtomicLong();
  private final ConcurrentHashMap<String, ToolRecord> tools = new ConcurrentHashMap<>();

  public TaskState(TaskBudget budget, @Nullable TaskState parent) {
    this.name = budget.name();
    this.maxSteps = budget.maxSteps();
    this.maxTokens = budget.tokens();
    this.parent = parent;
  }

  /** The state of the task in {@code context}, or {@code null} outside a task. */
  @Nullable
  public static TaskState from(ContextView context) {
    return context.getOrDefault(ContextKeys.TASK_STATE, null);
  }

  public String name() {
    return name;
  }

  /** What the task in {@code context} has left. */
  public static RemainingBudget remaining(ContextView context) {
    Deadline deadline = Deadline.from(context).orElse(null);
    TaskRetryBudget retries = TaskRetryBudget.from(context).orElse(null);
    TaskState state = from(context);
    return new RemainingBudget(
        deadline == null ? null : deadline.remaining().truncatedTo(ChronoUnit.MILLIS),
        retries == null ? TaskBudget.UNLIMITED : retries.remaining(),
        state == null ? TaskBudget.UNLIMITED : state.stepsLeft(),
        state == null ? TaskBudget.UNLIMITED : state.tokensLeft());
  }

  /** Takes one step from this task and its parents; the error, taking nothing, if any of them is used up. */
  @Nullable
  public StepBudgetExhaustedException takeStep() {
    if (maxSteps != TaskBudget.UNLIMITED && steps.incrementAndGet() > maxSteps) {
      steps.decrementAndGet();
      return new StepBudgetExhaustedException(name, maxSteps);
    }
    StepBudgetExhaustedException outer = parent == null ? null : parent.takeStep();
    if (outer != null && maxSteps != TaskBudget.UNLIMITED) {
      steps.decrementAndGet();
    }
    return outer;
  }

  /** Records {@code n} tokens spent here and in the parents; the error if any budget is now passed. */
  @Nullable
  public TokenBudgetExhaustedException spendTokens(long n) {
    long spent = tokens.accumulateAndGet(n, Saturating::add);   // a huge count stops at Long.MAX_VALUE, never wraps
    TokenBudgetExhaustedException outer = parent == null ? null : parent.spendTokens(n);
    if (maxTokens != TaskBudget.UNLIMITED && spent > maxTokens) {
      return new TokenBudgetExhaustedException(name, maxTokens, spent);
    }
    return outer;
  }

  int stepsLeft() {
    int own = maxSteps == TaskBudget.UNLIMITED ? TaskBudget.UNLIMITED : Math.max(0, maxSteps - steps.get());
    int outer = parent == null ? TaskBudget.UNLIMITED : parent.stepsLeft();
    return least(own, outer);
  }

  long tokensLeft() {
    long own = maxTokens == TaskBudget.UNLIMITED ? TaskBudget.UNLIMITED : Math.max(0, maxTokens - tokens.get());
    long outer = parent == null ? TaskBudget.UNLIMITED : parent.tokensLeft();
    return own == TaskBudget.UNLIMITED ? outer : outer == TaskBudget.UNLIMITED ? own : Math.min(own, outer);
  }

  private static int least(int a, int b) {
    return a == TaskBudget.UNLIMITED ? b : b == TaskBudget.UNLIMITED ? a : Math.min(a, b);
  }

  /** The error to fail fast with if {@code tool} has been written off for this task, else {@code null}. */
  @Nullable
  public ToolUnavailableException unavailable(String tool) {
    ToolRecord record = tools.get(tool);
    if (record == null) {
      return null;
    }
    FailureKind cause = record.unavailable;
    return cause == null ? null : new ToolUnavailableException(tool, cause, record.counts.get(cause.ordinal()));
  }

  /** Refuse calls of {@code tool} until {@code untilNanos} on the task's clock (it asked to be left alone). */
  public void coolDown(String tool, long untilNanos) {
    ToolRecord record = tools.computeIfAbsent(tool, t -> new ToolRecord());
    record.coolDownUntil.accumulateAndGet(untilNanos, Math::max);
  }

  /** The nanoseconds left before {@code tool} may be called again at {@code nowNanos}; 0 or less when it may. */
  public long coolDownLeft(String tool, long nowNanos) {
    ToolRecord record = tools.get(tool);
    long until = record == null ? Long.MIN_VALUE : record.coolDownUntil.get();
    // compared before subtracting: the initial Long.MIN_VALUE minus a positive clock reading overflows
    return until <= nowNanos ? 0 : until - nowNanos;
  }

  /** The failures of {@code kind} that {@code tool} had in this task. */
  public int failures(String tool, FailureKind kind) {
    ToolRecord record = tools.get(tool);
    return record == null ? 0 : record.counts.get(kind.ordinal());
  }

  /**
   * Counts a failed call of {@code tool} and updates its memory line. A failure of the dependency writes the tool
   * off once its kind reaches its threshold in {@code unavailableAfter}. A refusal of the caller's own arguments
   * ({@link #callersMistake}) never does: it is remembered for {@code argumentsKey} only (when not {@code null}), so
   * that {@link #refusal} can refuse the same arguments later. Returns the count of {@code kind} so far.
   */
  public int recordFailure(String tool, FailureKind kind, String reason, Map<FailureKind, Integer> unavailableAfter,
      @Nullable String argumentsKey) {
    ToolRecord record = tools.computeIfAbsent(tool, t -> new ToolRecord());
    int count = record.counts.incrementAndGet(kind.ordinal());
    if (callersMistake(kind)) {
      if (argumentsKey != null) {
        record.refuse(argumentsKey, kind, reason);
      }
    } else {
      Integer threshold = unavailableAfter.get(kind);
      if (threshold != null && count >= threshold && record.unavailable == null) {
        record.unavailable = kind;
      }
    }
    record.line = tool + ": " + record.summary() + "; last: " + kind.tag() + " (" + reason + ")"
        + (record.unavailable != null ? "; unavailable for this task" : "");
    return count;
  }

  /** Whether a failure of {@code kind} is a refusal of the caller's own arguments, not a fault of the tool. */
  public static boolean callersMistake(FailureKind kind) {
    return kind == FailureKind.INVALID_ARGUMENT || kind == FailureKind.CLIENT_ERROR;
  }

  /**
   * The error to refuse a call of {@code tool} with, without making it, when the tool refused the same arguments at
   * least as often in this task as {@code unavailableAfter} allows for the refusal's kind; else {@code null}. The key
   * of the arguments is computed only if the tool refused any arguments in this task.
   */
  @Nullable
  public ToolArgumentsRefusedException refusal(String tool, Supplier<String> argumentsKey,
      Map<FailureKind, Integer> unavailableAfter) {
    ToolRecord record = tools.get(tool);
    ConcurrentHashMap<String, Refused> refused = record == null ? null : record.refused;
    if (refused == null || refused.isEmpty()) {
      return null;
    }
    String key = argumentsKey.get();
    Refused earlier = key == null ? null : refused.get(key);
    if (earlier == null) {
      return null;
    }
    Integer threshold = unavailableAfter.get(earlier.kind);
    int failures = earlier.failures.get();
    return threshold == null || failures < threshold ? null
        : new ToolArgumentsRefusedException(tool, earlier.kind, earlier.reason, failures);
  }

  /** Notes a successful call of {@code tool} in its memory line, if it has one; {@code via} names a fallback. */
  public void recordSuccess(String tool, @Nullable String via) {
    ToolRecord record = tools.get(tool);
    if (record != null) {
      record.line = tool + ": " + record.summary() + "; last call ok" + (via == null ? "" : " via " + via)
          + (record.unavailable != null ? "; unavailable for this task" : "");
    }
  }

  /** One line per tool that failed in this task, sorted by tool name. */
  public List<String> memoryLines() {
    TreeMap<String, String> sorted = new TreeMap<>();
    tools.forEach((tool, record) -> sorted.put(tool, record.line));
    return new ArrayList<>(sorted.values());
  }

  /** How often, and why, one set of arguments was refused. */
  private static final class Refused {
    final FailureKind kind;
    final String reason;
    final AtomicInteger failures = new AtomicInteger();

    Refused(FailureKind kind, String reason) {
      this.kind = kind;
      this.reason = reason;
    }
  }

  private static final class ToolRecord {
    @SuppressWarnings("rawtypes")
    private static final AtomicReferenceFieldUpdater<ToolRecord, ConcurrentHashMap> REFUSED =
        AtomicReferenceFieldUpdater.newUpdater(ToolRecord.class, ConcurrentHashMap.class, "refused");

    final AtomicIntegerArray counts = new AtomicIntegerArray(KINDS.length);
    /**
     * Arguments the tool refused, by key; {@code null} until the first refusal, as a tool that only fails (timeouts,
     * 5xx) or cools down never needs it. Set once, by compare-and-set, so racing first refusals share one table.
     */
    @Nullable
    volatile ConcurrentHashMap<String, Refused> refused;
    final AtomicLong coolDownUntil = new AtomicLong(Long.MIN_VALUE);
    /** The kind whose threshold wrote the tool off, or {@code null}. */
    volatile @Nullable FailureKind unavailable;
    volatile @Nullable String line;

    @SuppressWarnings("unchecked")
    void refuse(String argumentsKey, FailureKind kind, String reason) {
      ConcurrentHashMap<String, Refused> refused = this.refused;
      if (refused == null) {
        REFUSED.compareAndSet(this, null, new ConcurrentHashMap<String, Refused>());
        refused = Objects.requireNonNull(this.refused, "set once, never cleared");
      }
      if (!refused.containsKey(argumentsKey) && refused.size() >= MAX_REFUSED_ARGUMENTS) {
        return;
      }
      refused.compute(argumentsKey, (k, entry) -> entry == null || entry.kind != kind ? new Refused(kind, reason)
          : entry).failures.incrementAndGet();
    }

    String summary() {
      StringBuilder b = new StringBuilder();
      int total = 0;
      for (FailureKind kind : KINDS) {
        int n = counts.get(kind.ordinal());
        if (n > 0) {
          b.append(b.length() == 0 ? "" : ", ").append(kind.tag()).append(' ').append(n);
          total += n;
        }
      }
      return total + (total == 1 ? " failure (" : " failures (") + b + ")";
    }
  }
}
