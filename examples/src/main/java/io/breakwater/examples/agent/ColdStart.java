package io.breakwater.examples.agent;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.breaker.SchedulerLag;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.Supplier;
import reactor.core.scheduler.Scheduler;

/** The scheduler-lag snippet of {@code docs/breaker.md}; {@code ColdStartTest} runs it. */
public final class ColdStart {

  private ColdStart() {}

  /** A probe of {@code scheduler} and breakers that ask it; dispose the probe when the registry goes. */
  public static CircuitBreakerRegistry breakers(Supplier<Scheduler> scheduler, MeterRegistry meters,
      SchedulerLag[] probe) {
    SchedulerLag lag = lag(scheduler, meters);
    probe[0] = lag;
    return breakers(lag, scheduler);
  }

  // snippet:breaker-scheduler-lag
  static SchedulerLag lag(Supplier<Scheduler> scheduler, MeterRegistry meters) {
    return SchedulerLag.builder()
        .scheduler(scheduler)                 // a Supplier<Scheduler> your timeouts run on (default Schedulers::parallel)
        .meterRegistry(meters)                // breakwater.scheduler.lag
        .start();                             // yours: lag.dispose() on shutdown cancels its timer
  }

  static CircuitBreakerRegistry breakers(SchedulerLag lag, Supplier<Scheduler> scheduler) {
    return CircuitBreakerRegistry.builder()
        .breakers(name -> CircuitBreaker.builder(name).schedulerLag(lag).scheduler(scheduler).build())
        .build();
  }
  // end-snippet
}
