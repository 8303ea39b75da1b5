package io.breakwater.deadline;

import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.deadline.DeadlineThreadLocal;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.ContextView;

/**
 * An absolute point in time by which a task must be done, as set by
 * {@link io.breakwater.Breakwater#withDeadline(Duration)} and carried in the Reactor {@code Context} of everything
 * upstream of it.
 *
 * <p>Any operator or user code can read the deadline in force and the time it leaves:
 *
 * <pre>{@code
 * Mono.deferContextual(ctx -> {
 *       Duration left = Deadline.from(ctx).map(Deadline::remaining).orElse(Duration.ofSeconds(30));
 *       return client.call(request, left);
 *     })
 *     .transformDeferred(withDeadline(Duration.ofSeconds(10)));
 * }</pre>
 *
 * <p>Time is read from the {@link Scheduler} the deadline was created with (its {@link #scheduler()}), never from
 * the system clock directly, so deadlines follow virtual time in tests. A deadline is immutable and thread-safe.
 *
 * <p>The per-call and idle budgets that other operators use by default are derived from the time remaining:
 * {@link #perCallBudget()} = min(remaining × perCallFraction, perCallCap) and {@link #idleBudget()} =
 * min(perCallBudget × idleFraction, idleCap), with the fractions and caps of the {@link DeadlineSpec} that set it
 * (defaults 0.6, 12 s, 0.3, 3 s).
 */
public final class Deadline {

  private final String name;
  private final long budgetNanos;
  private final DeadlineSpec spec;
  private final Scheduler scheduler;
  private final long startNanos;
  private final long expiresAtNanos;
  private final boolean call;

  private Deadline(String name, long budgetNanos, DeadlineSpec spec, Scheduler scheduler, boolean call,
      long startNanos) {
    this.name = name;
    this.budgetNanos = budgetNanos;
    this.spec = spec;
    this.scheduler = scheduler;
    this.call = call;
    this.startNanos = startNanos;
    this.expiresAtNanos = saturatedAdd(startNanos, budgetNanos);
  }

  /** A task deadline that starts now on {@code scheduler}'s clock and expires after {@code spec.budget()}. */
  public static Deadline start(DeadlineSpec spec, Scheduler scheduler) {
    return new Deadline(spec.name(), Saturating.nanos(spec.budget()), spec, scheduler, false,
        scheduler.now(TimeUnit.NANOSECONDS));
  }

  /**
   * A deadline for one call (one attempt) that starts now and expires after {@code budget}. Its expiry is a
   * retryable {@link CallTimeoutException}, not a {@link DeadlineExceededException}; per-call and idle budgets
   * derived from it use {@code derivation}'s fractions and caps, with the call's whole remaining time as the
   * per-call budget.
   */
  public static Deadline startCall(String name, Duration budget, DeadlineSpec derivation, Scheduler scheduler) {
    return startCall(name, budget, derivation, scheduler, scheduler.now(TimeUnit.NANOSECONDS));
  }

  /**
   * {@link #startCall(String, Duration, DeadlineSpec, Scheduler)} for a call that started at {@code startNanos} on
   * {@code scheduler}'s clock (as {@code scheduler.now(TimeUnit.NANOSECONDS)} reads it): for an operator that has
   * just read that clock, or that starts the call at the same instant as the deadline it runs under.
   */
  public static Deadline startCall(String name, Duration budget, DeadlineSpec derivation, Scheduler scheduler,
      long startNanos) {
    return new Deadline(name, Saturating.nanos(budget), derivation, scheduler, true, startNanos);
  }

  /** The deadline in force in {@code context}, if any. */
  public static Optional<Deadline> from(ContextView context) {
    return Optional.ofNullable(context.getOrDefault(ContextKeys.DEADLINE, null));
  }

  /**
   * The deadline in force on this thread, for blocking code that runs outside the operator chain (e.g. on
   * {@code Schedulers.boundedElastic()}). It is filled by Micrometer context-propagation, so it is present where
   * Reactor restores thread-locals: with {@code Hooks.enableAutomaticContextPropagation()}, or inside
   * {@code ContextSnapshot} scopes.
   */
  public static Optional<Deadline> current() {
    return Optional.ofNullable(DeadlineThreadLocal.get());
  }

  /** The name of this deadline: its spec's name, or the call's. */
  public String name() {
    return name;
  }

  /** The budget this deadline was given when it started. */
  public Duration budget() {
    return Duration.ofNanos(budgetNanos);
  }

  /** Whether this deadline bounds one call (see {@link #startCall}) rather than a task. */
  public boolean isCall() {
    return call;
  }

  /** The spec whose fractions and caps derive per-call and idle budgets from this deadline. */
  public DeadlineSpec spec() {
    return spec;
  }

  /** The scheduler whose clock this deadline follows. */
  public Scheduler scheduler() {
    return scheduler;
  }

  /**
   * The instant the deadline passes, in nanoseconds on its {@link #scheduler()}'s clock (as
   * {@code scheduler().now(TimeUnit.NANOSECONDS)} reads it); {@code Long.MAX_VALUE} for a budget too large to add.
   */
  public long expiresAtNanos() {
    return expiresAtNanos;
  }

  /** The time left before the deadline, in nanoseconds; zero or negative once it has passed. */
  public long remainingNanos() {
    return expiresAtNanos - scheduler.now(TimeUnit.NANOSECONDS);
  }

  /** The time left before the deadline; {@link Duration#ZERO} once it has passed, never negative. */
  public Duration remaining() {
    return Duration.ofNanos(Math.max(0L, remainingNanos()));
  }

  /** How much of the budget has been used so far (more than the budget once the deadline has passed). */
  public Duration elapsed() {
    return Duration.ofNanos(scheduler.now(TimeUnit.NANOSECONDS) - startNanos);
  }

  /** Whether the deadline has passed. */
  public boolean isExpired() {
    return remainingNanos() <= 0;
  }

  /**
   * The budget one call may take now: min(remaining × perCallFraction, perCallCap); for a call's own deadline,
   * min(remaining, perCallCap).
   */
  public Duration perCallBudget() {
    return Duration.ofNanos(perCallNanos());
  }

  /** The time a stream may go without progress now: min(perCallBudget × idleFraction, idleCap). */
  public Duration idleBudget() {
    return Duration.ofNanos(Math.min((long) (perCallNanos() * spec.idleFraction()), Saturating.nanos(spec.idleCap())));
  }

  /** The per-call budget now, in nanoseconds; see {@link #perCallBudget()}. */
  public long perCallNanos() {
    long remaining = Math.max(0L, remainingNanos());
    long share = call ? remaining : (long) (remaining * spec.perCallFraction());
    return Math.min(share, Saturating.nanos(spec.perCallCap()));
  }

  /**
   * The error that reports this deadline as passed, with how much of the budget was used until now: a
   * {@link DeadlineExceededException} for a task, a {@link CallTimeoutException} for a call.
   */
  public TimeoutException exceeded() {
    Duration used = budgetNanos == 0 ? Duration.ZERO : elapsed();
    return call
        ? new CallTimeoutException(name, budget(), used)
        : new DeadlineExceededException(name, budget(), used);
  }

  @Override
  public String toString() {
    return (call ? "CallDeadline{" : "Deadline{") + name + ", budget=" + budget() + ", remaining=" + remaining()
        + "}";
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }
}
