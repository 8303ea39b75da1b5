package io.breakwater.internal.idempotency;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@code breakwater.idempotency.calls} (counter; tags {@code tool}, {@code outcome} = hit, miss, in_flight, expired,
 * mismatch, fenced, unrecorded, bypassed) and {@code breakwater.idempotency.hit.ratio} (gauge; tag {@code tool}):
 * hits over calls that reached an outcome (hit, miss, expired).
 */
final class IdempotencyMetrics {

  enum Outcome {
    HIT, MISS, IN_FLIGHT, EXPIRED, MISMATCH, FENCED, UNRECORDED, BYPASSED;

    final String tag = name().toLowerCase(java.util.Locale.ROOT);
  }

  private static final ConcurrentMap<MeterRegistry, ConcurrentMap<String, IdempotencyMetrics>> BY_REGISTRY =
      new ConcurrentHashMap<>();

  private final Counter[] counters = new Counter[Outcome.values().length];
  private final LongAdder hits = new LongAdder();
  private final LongAdder settled = new LongAdder();

  private IdempotencyMetrics(MeterRegistry registry, String tool) {
    for (Outcome outcome : Outcome.values()) {
      counters[outcome.ordinal()] = Counter.builder("breakwater.idempotency.calls")
          .description("Calls through idempotentBy, by outcome")
          .tag("tool", tool)
          .tag("outcome", outcome.tag)
          .register(registry);
    }
    Gauge.builder("breakwater.idempotency.hit.ratio", this, IdempotencyMetrics::hitRatio)
        .description("Share of idempotent calls answered from a stored outcome")
        .tag("tool", tool)
        .register(registry);
  }

  static IdempotencyMetrics of(MeterRegistry registry, String tool) {
    return BY_REGISTRY.computeIfAbsent(registry, r -> new ConcurrentHashMap<>())
        .computeIfAbsent(tool, t -> new IdempotencyMetrics(registry, t));
  }

  void record(Outcome outcome) {
    counters[outcome.ordinal()].increment();
    if (outcome == Outcome.HIT) {
      hits.increment();
      settled.increment();
    } else if (outcome == Outcome.MISS || outcome == Outcome.EXPIRED) {
      settled.increment();
    }
  }

  private double hitRatio() {
    long total = settled.sum();
    return total == 0 ? 0.0 : (double) hits.sum() / total;
  }
}
