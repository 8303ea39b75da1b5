package io.breakwater.deadline;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * An immutable, validated description of a deadline: its budget, its name, the {@link Scheduler} whose clock it
 * follows, and how per-call and idle budgets are derived from the time it has left.
 *
 * <pre>{@code
 * DeadlineSpec task = DeadlineSpec.builder(Duration.ofSeconds(30))
 *     .name("plan-trip")
 *     .perCallCap(Duration.ofSeconds(8))
 *     .build();
 * Mono<Plan> plan = planner.plan(request).transformDeferred(withDeadline(task));
 * }</pre>
 *
 * <h2>Defaults</h2>
 * <table>
 *   <caption>Defaults</caption>
 *   <tr><th>setting</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code name}</td><td>{@code "deadline"}</td><td>named in {@link DeadlineExceededException}</td></tr>
 *   <tr><td>{@code scheduler}</td><td>{@code Schedulers::parallel}</td><td>the clock and the timer, resolved at
 *       subscription (so {@code StepVerifier.withVirtualTime} drives it)</td></tr>
 *   <tr><td>{@code perCallFraction}, {@code perCallCap}</td><td>0.6, 12 s</td>
 *       <td>per-call budget = min(remaining × 0.6, 12 s)</td></tr>
 *   <tr><td>{@code idleFraction}, {@code idleCap}</td><td>0.3, 3 s</td>
 *       <td>idle budget = min(per-call × 0.3, 3 s)</td></tr>
 * </table>
 *
 * <p>Instances are immutable and thread-safe: store one as a template and use it for every call.
 */
public final class DeadlineSpec {

  /** The name of a deadline that was not given one. */
  public static final String DEFAULT_NAME = "deadline";
  /** Default share of the remaining time one call may take. */
  public static final double DEFAULT_PER_CALL_FRACTION = 0.6;
  /** Default upper bound of a per-call budget. */
  public static final Duration DEFAULT_PER_CALL_CAP = Duration.ofSeconds(12);
  /** Default share of the per-call budget a stream may stay idle. */
  public static final double DEFAULT_IDLE_FRACTION = 0.3;
  /** Default upper bound of an idle budget. */
  public static final Duration DEFAULT_IDLE_CAP = Duration.ofSeconds(3);

  private final Duration budget;
  private final String name;
  private final Supplier<Scheduler> scheduler;
  private final double perCallFraction;
  private final Duration perCallCap;
  private final double idleFraction;
  private final Duration idleCap;

  private DeadlineSpec(Builder b) {
    this.budget = b.budget;
    this.name = b.name;
    this.scheduler = b.scheduler;
    this.perCallFraction = b.perCallFraction;
    this.perCallCap = b.perCallCap;
    this.idleFraction = b.idleFraction;
    this.idleCap = b.idleCap;
  }

  /** A deadline of {@code budget} with every other setting at its default. */
  public static DeadlineSpec of(Duration budget) {
    return builder(budget).build();
  }

  /** A builder for a deadline of {@code budget}; {@link Duration#ZERO} makes every call fail at once. */
  public static Builder builder(Duration budget) {
    return new Builder(budget);
  }

  /** A builder that starts from this spec's settings. */
  public Builder toBuilder() {
    Builder b = new Builder(budget);
    b.name = name;
    b.scheduler = scheduler;
    b.perCallFraction = perCallFraction;
    b.perCallCap = perCallCap;
    b.idleFraction = idleFraction;
    b.idleCap = idleCap;
    return b;
  }

  public Duration budget() {
    return budget;
  }

  public String name() {
    return name;
  }

  /** The supplier of the scheduler; call it at subscription time, not at assembly time. */
  public Supplier<Scheduler> scheduler() {
    return scheduler;
  }

  public double perCallFraction() {
    return perCallFraction;
  }

  public Duration perCallCap() {
    return perCallCap;
  }

  public double idleFraction() {
    return idleFraction;
  }

  public Duration idleCap() {
    return idleCap;
  }

  @Override
  public String toString() {
    return "DeadlineSpec{" + name + ", budget=" + budget + ", perCall=min(remaining×" + perCallFraction + ", "
        + perCallCap + "), idle=min(perCall×" + idleFraction + ", " + idleCap + ")}";
  }

  /** Builds a {@link DeadlineSpec}; {@link #build()} validates and says what to change. */
  public static final class Builder {
    private final Duration budget;
    private String name = DEFAULT_NAME;
    private Supplier<Scheduler> scheduler = Schedulers::parallel;
    private double perCallFraction = DEFAULT_PER_CALL_FRACTION;
    private Duration perCallCap = DEFAULT_PER_CALL_CAP;
    private double idleFraction = DEFAULT_IDLE_FRACTION;
    private Duration idleCap = DEFAULT_IDLE_CAP;

    private Builder(Duration budget) {
      this.budget = Objects.requireNonNull(budget, "budget");
    }

    /** The name that {@link DeadlineExceededException} gives for this deadline, e.g. the task's name. */
    public Builder name(String name) {
      this.name = Objects.requireNonNull(name, "name");
      return this;
    }

    /** Where time is read and the timer runs; default {@code Schedulers::parallel}, resolved at subscription. */
    public Builder scheduler(Supplier<Scheduler> scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /** The share of the remaining time that one call may take, in (0, 1]; default 0.6. */
    public Builder perCallFraction(double fraction) {
      this.perCallFraction = fraction;
      return this;
    }

    /** The most any one call may take, however much time remains; default 12 s. */
    public Builder perCallCap(Duration cap) {
      this.perCallCap = Objects.requireNonNull(cap, "perCallCap");
      return this;
    }

    /** The share of the per-call budget that a stream may go without progress, in (0, 1]; default 0.3. */
    public Builder idleFraction(double fraction) {
      this.idleFraction = fraction;
      return this;
    }

    /** The longest a stream may go without progress, however long the per-call budget; default 3 s. */
    public Builder idleCap(Duration cap) {
      this.idleCap = Objects.requireNonNull(cap, "idleCap");
      return this;
    }

    public DeadlineSpec build() {
      if (budget.isNegative()) {
        throw new IllegalArgumentException("Deadline budget is negative (" + budget
            + "): give a positive budget, or Duration.ZERO to fail every call at once");
      }
      if (name.isBlank()) {
        throw new IllegalArgumentException("Deadline name is blank: name it after the task it bounds");
      }
      checkFraction("perCallFraction", perCallFraction);
      checkFraction("idleFraction", idleFraction);
      checkPositive("perCallCap", perCallCap);
      checkPositive("idleCap", idleCap);
      return new DeadlineSpec(this);
    }

    private static void checkFraction(String what, double value) {
      if (!(value > 0.0 && value <= 1.0)) {
        throw new IllegalArgumentException(what + " is " + value
            + ": it is a share of the time left, so give a number greater than 0 and at most 1 (e.g. 0.6)");
      }
    }

    private static void checkPositive(String what, Duration value) {
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException(what + " is " + value + ": give a positive duration");
      }
    }
  }
}
