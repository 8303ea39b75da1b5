package io.breakwater.composition;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.testing.Fuzz;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The composition suite (issue 35): random stacks of {@code withDeadline}, {@code perCallTimeout},
 * {@code retryWithBudget}, {@code guardedBy}, {@code idempotentBy}, {@code hedgedBy}, {@code limitedBy},
 * {@code throttledBy}, {@code streamTimeouts} and {@code sideEffect}, in random orders, over random fault scripts
 * (latency, stalls, 5xx, 429 with {@code Retry-After}, resets after the write, refused connections) and callers that
 * leave at random instants, each run in virtual time. After each run (see {@link CompositionRun}):
 *
 * <ul>
 *   <li>a {@code NON_IDEMPOTENT_WRITE} inside {@code idempotentBy} reaches the dependency at most once per key, and
 *       one retried or hedged outside it never reaches it;</li>
 *   <li>no caller's attempts exceed the budgets in force (the retries of every retry layer added, not multiplied,
 *       capped by the task's budget, times the hedges), and no attempt starts after its caller ended;</li>
 *   <li>every call ends by its deadline, and one that the deadline ends fails with a {@code TimeoutException};</li>
 *   <li>once every call has ended, and a day later: no permit held, no call queued, no attempt left open, and (a day
 *       later) no timer pending;</li>
 *   <li>at most one terminal signal, nothing after it, and no call that never ends.</li>
 * </ul>
 *
 * A failing case is shrunk (a layer, a caller, a fault, a cancellation, a retry fewer, latencies halved) and printed
 * with its seed; the shrunk case becomes a named regression test. The seed is fixed, so every build runs the same
 * cases; {@code mvn -pl core -Pfuzz test} runs a thousand times as many with a random seed.
 */
class OperatorCompositionFuzzTest {

  private static final int CASES = 1_000;

  @Test
  void randomStacksOverRandomFaultsKeepEveryInvariant() {
    long seed = Fuzz.seed(35L);
    int cases = Fuzz.cases(CASES);
    for (int i = 0; i < cases; i++) {
      SplittableRandom random = Fuzz.random(seed, i);
      CompositionCase c = CompositionCase.random(random, CompositionRun.WRITE_RULE_ON_MAIN);
      List<String> violations = CompositionRun.violations(c);
      if (!violations.isEmpty()) {
        CompositionCase shrunk = shrink(c);
        assertThat(CompositionRun.violations(shrunk))
            .as("%s broke the invariants.%n  Case: %s%n  Shrunk: %s%n", Fuzz.replay(seed, i), c, shrunk)
            .isEmpty();
      }
    }
  }

  /** The simplest case found, by single steps, that still breaks an invariant. */
  static CompositionCase shrink(CompositionCase failing) {
    CompositionCase current = failing;
    boolean simpler = true;
    while (simpler) {
      simpler = false;
      for (CompositionCase candidate : current.simpler()) {
        if (candidate.allowed(CompositionRun.WRITE_RULE_ON_MAIN) && !CompositionRun.violations(candidate).isEmpty()) {
          current = candidate;
          simpler = true;
          break;
        }
      }
    }
    return current;
  }
}
