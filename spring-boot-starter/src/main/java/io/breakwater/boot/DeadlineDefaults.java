package io.breakwater.boot;

import io.breakwater.deadline.DeadlineSpec;
import java.time.Duration;
import java.util.Objects;

/**
 * Deadline specs with the application's per-call and idle ratios ({@code breakwater.deadline.*}), for any budget:
 *
 * <pre>{@code
 * Mono<Plan> plan = planner.plan(request)
 *     .transformDeferred(withDeadline(deadlines.spec("plan-trip", Duration.ofSeconds(20))));
 * }</pre>
 *
 * <p>The inbound deadline filter uses it for every request that carries the deadline header. Immutable and
 * thread-safe.
 */
public final class DeadlineDefaults {

  private final DeadlineSpec template;

  /** Defaults taken from {@code template}'s name, scheduler, fractions and caps (its budget is not used). */
  public DeadlineDefaults(DeadlineSpec template) {
    this.template = Objects.requireNonNull(template, "template");
  }

  /** A deadline of {@code budget} with the configured ratios and caps. */
  public DeadlineSpec spec(Duration budget) {
    return spec(template.name(), budget);
  }

  /** A deadline named {@code name} (as {@code DeadlineExceededException} reports it) of {@code budget}. */
  public DeadlineSpec spec(String name, Duration budget) {
    return DeadlineSpec.builder(budget)
        .name(name)
        .scheduler(template.scheduler())
        .perCallFraction(template.perCallFraction())
        .perCallCap(template.perCallCap())
        .idleFraction(template.idleFraction())
        .idleCap(template.idleCap())
        .build();
  }

  @Override
  public String toString() {
    return "DeadlineDefaults" + template;
  }
}
