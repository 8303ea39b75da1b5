package io.breakwater.examples.agent;

import static io.breakwater.Breakwater.guardedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.breaker.SchedulerLag;
import io.breakwater.deadline.CallTimeoutException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.test.scheduler.VirtualTimeScheduler;

class ColdStartTest {

  /** A scheduler whose timers run 500 ms late, as on a starved machine. */
  static Scheduler late(VirtualTimeScheduler clock) {
    return new Scheduler() {
      @Override
      public Disposable schedule(Runnable task) {
        return clock.schedule(task);
      }

      @Override
      public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        return clock.schedule(task, unit.toMillis(delay) + 500, TimeUnit.MILLISECONDS);
      }

      @Override
      public long now(TimeUnit unit) {
        return clock.now(unit);
      }

      @Override
      public Worker createWorker() {
        return clock.createWorker();
      }
    };
  }

  @Test
  void timeoutsWhileTheSchedulerIsStarvedDoNotOpenTheBreaker() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    Scheduler starved = late(clock);
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    SchedulerLag[] probe = new SchedulerLag[1];
    CircuitBreakerRegistry breakers = ColdStart.breakers(() -> starved, meters, probe);
    clock.advanceTimeBy(Duration.ofSeconds(2));
    for (int i = 0; i < 50; i++) {
      Mono.error(new CallTimeoutException("per-call", Duration.ofMillis(500), Duration.ofMillis(500)))
          .transformDeferred(guardedBy(breakers, "mail.send")).subscribe(v -> { }, e -> { });
    }
    assertThat(breakers.breaker("mail.send").state()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(meters.get("breakwater.scheduler.lag").gauge().value()).isEqualTo(0.5);
    probe[0].dispose();
  }
}
