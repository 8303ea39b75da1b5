package io.breakwater.agent;

import io.breakwater.failure.FailureKind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * A degradation chain for a tool: what to answer when a call fails for a reason another source can cover. Steps
 * are tried in the order added, each only if the one before failed: alternate tools, then the last good value for
 * the same arguments (stale), then a static default.
 *
 * <pre>{@code
 * Tool<Query, Offers> flights = Tool.of(search, client::search, Offers.class)
 *     .withFallbacks(Fallbacks.<Query, Offers>builder()
 *         .alternate(backupFlights)                 // another Tool<Query, Offers>
 *         .stale(Duration.ofMinutes(30))            // the last success for the same arguments, if not older
 *         .orDefault(q -> Offers.none())            // finally a static answer
 *         .build());
 * }</pre>
 *
 * <p><b>When.</b> Only failures of the trigger kinds start the chain; by default {@code TIMEOUT}, {@code CONNECTION},
 * {@code RATE_LIMITED}, {@code SERVER_ERROR} and {@code CIRCUIT_OPEN}. {@code DEADLINE_EXCEEDED} starts only the steps that make no call (stale and
 * default): there is no time left for an alternate tool. Invalid arguments, client errors, business refusals,
 * misconfiguration and exhausted budgets never do: a substitute answer would hide a mistake the model or the
 * operator must fix. {@link Builder#on} may narrow or widen the kinds, but refuses {@code INVALID_ARGUMENT} and
 * {@code CLIENT_ERROR}: a refusal of the caller's own arguments never gets a fallback. A tool written off for the
 * task ({@link ToolUnavailableException}) falls back as the failures that wrote it off would have
 * ({@link ToolUnavailableException#causeKind()}).
 *
 * <p>If every step fails, the caller gets the original failure, with the steps' failures suppressed in it. The stale
 * cache (Caffeine, bounded, expiring after its maximum age on the tool's scheduler clock) is per {@link Tool}: it
 * fills from the tool's successful calls. Immutable and thread-safe.
 *
 * @param <A> the tool's arguments
 * @param <R> its result
 */
public final class Fallbacks<A, R> {

  /** The kinds that start the chain unless {@link Builder#on} says otherwise. */
  public static final Set<FailureKind> DEFAULT_TRIGGERS = Set.copyOf(EnumSet.of(FailureKind.TIMEOUT,
      FailureKind.CONNECTION, FailureKind.RATE_LIMITED, FailureKind.SERVER_ERROR, FailureKind.CIRCUIT_OPEN,
      FailureKind.DEADLINE_EXCEEDED));

  /** Default bound of the stale-value cache: 10 000 argument sets per tool. */
  public static final long DEFAULT_STALE_ENTRIES = 10_000;

  /** One step of the chain. */
  public sealed interface Step<A, R> {}

  /** Call another tool (or function) with the same arguments. */
  public record Alternate<A, R>(String name, Function<? super A, ? extends Mono<R>> call) implements Step<A, R> {}

  /** Answer with the last success for the same arguments, if younger than {@code maxAge}. */
  public record Stale<A, R>(Duration maxAge, long maxEntries) implements Step<A, R> {}

  /** Answer with a value computed from the arguments without I/O. */
  public record Default<A, R>(Function<? super A, ? extends R> value) implements Step<A, R> {}

  private final List<Step<A, R>> steps;
  private final Set<FailureKind> triggers;

  private Fallbacks(Builder<A, R> b) {
    this.steps = List.copyOf(b.steps);
    this.triggers = Set.copyOf(b.triggers);
  }

  public static <A, R> Builder<A, R> builder() {
    return new Builder<>();
  }

  public List<Step<A, R>> steps() {
    return steps;
  }

  public Set<FailureKind> triggers() {
    return triggers;
  }

  /** Whether a failure of {@code kind} starts the chain at all. */
  public boolean triggeredBy(FailureKind kind) {
    return triggers.contains(kind);
  }

  /** Whether {@code step} may run after a failure of {@code kind}: calls are skipped once the deadline passed. */
  public static boolean applies(Step<?, ?> step, FailureKind kind) {
    return !(kind == FailureKind.DEADLINE_EXCEEDED && step instanceof Alternate<?, ?>);
  }

  @Override
  public String toString() {
    return "Fallbacks{" + steps + " on " + triggers + "}";
  }

  /** Builds {@link Fallbacks}; {@link #build()} validates and says what to change. */
  public static final class Builder<A, R> {
    private final List<Step<A, R>> steps = new ArrayList<>();
    private Set<FailureKind> triggers = DEFAULT_TRIGGERS;

    private Builder() {}

    /** Call {@code tool} with the same arguments; it runs its own pipeline (and takes a step of the task). */
    public Builder<A, R> alternate(Tool<A, R> tool) {
      Objects.requireNonNull(tool, "tool");
      steps.add(new Alternate<>(tool.name(), tool::call));
      return this;
    }

    /** Call {@code call} with the same arguments, named {@code name} in events and feedback. */
    public Builder<A, R> alternate(String name, Function<? super A, ? extends Mono<R>> call) {
      steps.add(new Alternate<>(Objects.requireNonNull(name, "name"), Objects.requireNonNull(call, "call")));
      return this;
    }

    /** Answer with the last success for the same arguments if it is younger than {@code maxAge}. */
    public Builder<A, R> stale(Duration maxAge) {
      return stale(maxAge, DEFAULT_STALE_ENTRIES);
    }

    /** {@link #stale(Duration)} keeping at most {@code maxEntries} argument sets. */
    public Builder<A, R> stale(Duration maxAge, long maxEntries) {
      Objects.requireNonNull(maxAge, "maxAge");
      if (maxAge.isNegative() || maxAge.isZero() || maxEntries < 1) {
        throw new IllegalArgumentException("stale(" + maxAge + ", " + maxEntries + "): give a positive age and at "
            + "least one entry");
      }
      if (steps.stream().anyMatch(s -> s instanceof Stale<?, ?>)) {
        throw new IllegalArgumentException("stale(..) is given twice: keep one");
      }
      steps.add(new Stale<>(maxAge, maxEntries));
      return this;
    }

    /** Answer with {@code value}. */
    public Builder<A, R> orDefault(R value) {
      Objects.requireNonNull(value, "value");
      return orDefault(args -> value);
    }

    /** Answer with a value computed from the arguments; it must not do I/O. */
    public Builder<A, R> orDefault(Function<? super A, ? extends R> value) {
      steps.add(new Default<>(Objects.requireNonNull(value, "value")));
      return this;
    }

    /** The failure kinds that start the chain, instead of {@link #DEFAULT_TRIGGERS}. */
    public Builder<A, R> on(FailureKind... kinds) {
      Set<FailureKind> set = EnumSet.noneOf(FailureKind.class);
      set.addAll(List.of(kinds));
      for (FailureKind callersMistake : List.of(FailureKind.INVALID_ARGUMENT, FailureKind.CLIENT_ERROR)) {
        if (set.contains(callersMistake)) {
          throw new IllegalArgumentException("Fallbacks on " + callersMistake + " would hide a mistake the model "
              + "must fix in its arguments: remove it");
        }
      }
      this.triggers = set;
      return this;
    }

    public Fallbacks<A, R> build() {
      if (steps.isEmpty()) {
        throw new IllegalArgumentException("Fallbacks has no step: add alternate(..), stale(..) or orDefault(..)");
      }
      if (triggers.isEmpty()) {
        throw new IllegalArgumentException("Fallbacks triggers on no failure kind: give on(..) at least one kind");
      }
      return new Fallbacks<>(this);
    }
  }
}
