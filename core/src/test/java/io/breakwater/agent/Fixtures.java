package io.breakwater.agent;

import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Shared test settings: deterministic retries, a private meter registry, captured events. */
final class Fixtures {

  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final List<String> events = new CopyOnWriteArrayList<>();

  /** A fixed 100 ms backoff, no per-kind bases, a budget that never refuses. */
  static RetryPolicy.Builder retry(String name, int maxRetries) {
    return RetryPolicy.builder().name(name).maxRetries(maxRetries).backoff(Backoff.fixed(Duration.ofMillis(100)))
        .timeoutBase(Duration.ZERO).budget(RetryBudget.unlimited());
  }

  ToolDescriptor.Builder descriptor(String name) {
    return ToolDescriptor.builder(name)
        .sideEffect(SideEffect.READ_ONLY)
        .timeouts(CallTimeouts.fixed(Duration.ofSeconds(2)))
        .retry(retry(name, 2).build())
        .meterRegistry(meters)
        .eventLog(events::add);
  }

  double timer(String tool, String result) {
    var timer = meters.find("breakwater.tool.calls").tag("tool", tool).tag("result", result).timer();
    return timer == null ? 0 : timer.count();
  }
}
