package io.breakwater.internal.hedge;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The hedge meters of one policy, registered when it is built (tag {@code dependency}): hedges started, hedges that
 * won, attempts cancelled because another answered first, and hedges the budget refused. Only hedged calls touch
 * them.
 */
final class HedgeMetrics {

  static final String STARTED = "breakwater.hedge.started";
  static final String WON = "breakwater.hedge.won";
  static final String CANCELLED = "breakwater.hedge.cancelled";
  static final String REFUSALS = "breakwater.hedge.budget.refusals";

  final Counter started;
  final Counter won;
  final Counter cancelled;
  final Counter refusals;

  HedgeMetrics(MeterRegistry registry, String dependency) {
    this.started = Counter.builder(STARTED).tag("dependency", dependency)
        .description("Backup attempts started").register(registry);
    this.won = Counter.builder(WON).tag("dependency", dependency)
        .description("Backup attempts that answered first").register(registry);
    this.cancelled = Counter.builder(CANCELLED).tag("dependency", dependency)
        .description("Attempts cancelled because another attempt of the call answered first").register(registry);
    this.refusals = Counter.builder(REFUSALS).tag("dependency", dependency)
        .description("Backup attempts not started because the hedge budget was empty").register(registry);
  }
}
