package io.breakwater.internal.breaker;

import io.breakwater.breaker.CircuitBreaker.State;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A breaker's meters, tagged {@code breaker=<name>}:
 * <ul>
 *   <li>{@code breakwater.breaker.state} (gauge, tag {@code state}): 1 for the current state, 0 for the others;</li>
 *   <li>{@code breakwater.breaker.transitions} (counter, tags {@code from}, {@code to});</li>
 *   <li>{@code breakwater.breaker.calls} (counter, tag {@code outcome}: {@code success}, {@code failure},
 *       {@code ignored}, {@code cancelled}, {@code rejected} (while open or half-open), {@code rejected_ramping_up}
 *       (held back while the closed breaker ramps traffic up after recovery), {@code local_overload} (a timeout while our scheduler
 *       was starved), {@code adaptive_cut} (a family's: a timeout a tool's tightened adaptive timeout caused)) and
 *       {@code breakwater.breaker.slow.calls}.</li>
 * </ul>
 * Successes, the hot outcome, are the breaker's own striped counter (which its windows also read), read when
 * scraped. The state gauge and the success count read the breaker; when a second breaker of the same name reports to
 * the same registry (a second {@code CircuitBreakerRegistry}), they follow the one built last, with a warning.
 */
final class BreakerMetrics {

  private static final Logger LOG = Loggers.getLogger(BreakerMetrics.class);

  static final String STATE = "breakwater.breaker.state";
  static final String TRANSITIONS = "breakwater.breaker.transitions";
  static final String CALLS = "breakwater.breaker.calls";
  static final String SLOW_CALLS = "breakwater.breaker.slow.calls";

  private final MeterRegistry registry;
  private final String name;
  private final Counter failures;
  private final Counter ignored;
  private final Counter cancelled;
  private final Counter rejected;
  private final Counter rejectedRampingUp;
  private final Counter localOverload;
  private final Counter adaptiveCut;
  private final Counter slow;
  private final Counter[] transitions = new Counter[State.values().length * State.values().length];

  BreakerMetrics(MeterRegistry registry, String name, BreakerCore core, LongAdder successes) {
    this.registry = registry;
    this.name = name;
    boolean replaced = false;
    for (State s : State.values()) {
      replaced |= removeEarlier(registry.find(STATE).tags("breaker", name, "state", s.tag()).gauge());
      Gauge.builder(STATE, core, c -> c.currentStateWithoutTransition() == s ? 1 : 0)
          .tags("breaker", name, "state", s.tag())
          .description("1 when the breaker is in this state")
          .register(registry);
    }
    replaced |= removeEarlier(registry.find(CALLS).tags("breaker", name, "outcome", "success").functionCounter());
    FunctionCounter.builder(CALLS, successes, LongAdder::sum)
        .tags("breaker", name, "outcome", "success")
        .register(registry);
    if (replaced) {
      LOG.warn("Breaker '{}': another breaker of this name already reported to this MeterRegistry; its state gauge "
          + "and success count now follow this one, its other counters are shared. Share one "
          + "CircuitBreakerRegistry, or give each its own MeterRegistry", name);
    }
    this.failures = calls("failure");
    this.ignored = calls("ignored");
    this.cancelled = calls("cancelled");
    this.rejected = calls("rejected");
    this.rejectedRampingUp = calls("rejected_ramping_up");
    this.localOverload = calls("local_overload");
    this.adaptiveCut = calls("adaptive_cut");
    this.slow = Counter.builder(SLOW_CALLS).tags("breaker", name).register(registry);
  }

  /**
   * Removes a meter that an earlier breaker of this name registered and that reads that breaker: Micrometer would
   * otherwise keep it, bound to a breaker that may no longer be used, and ignore this one's.
   */
  private boolean removeEarlier(@Nullable Meter earlier) {
    return earlier != null && registry.remove(earlier) != null;
  }

  private Counter calls(String outcome) {
    return Counter.builder(CALLS).tags("breaker", name, "outcome", outcome).register(registry);
  }

  void failure() {
    failures.increment();
  }

  void ignored() {
    ignored.increment();
  }

  void cancelled() {
    cancelled.increment();
  }

  void rejected() {
    rejected.increment();
  }

  void rejectedRampingUp() {
    rejectedRampingUp.increment();
  }

  void localOverload() {
    localOverload.increment();
  }

  void adaptiveCut() {
    adaptiveCut.increment();
  }

  void slow() {
    slow.increment();
  }

  /** Called by the single transition-delivering thread. */
  void transition(State from, State to) {
    int index = from.ordinal() * State.values().length + to.ordinal();
    Counter c = transitions[index];
    if (c == null) {
      c = Counter.builder(TRANSITIONS).tags("breaker", name, "from", from.tag(), "to", to.tag())
          .register(registry);
      transitions[index] = c;
    }
    c.increment();
  }
}
