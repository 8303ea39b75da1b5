package io.breakwater.breaker;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.breaker.Calls.counting;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker.State;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.scheduler.VirtualTimeScheduler;

/** Many callers arrive at once when the open duration ends; exactly the configured number of probes get through. */
class HalfOpenProbeRaceTest {

  private static final int CALLERS = 1000;

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

  private static int race(CircuitBreaker b, Mono<String> call, AtomicInteger rejected) throws InterruptedException {
    ExecutorService callers = Executors.newFixedThreadPool(8);
    CountDownLatch start = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(CALLERS);
    try {
      for (int i = 0; i < CALLERS; i++) {
        callers.execute(() -> {
          try {
            start.await();
            call.transformDeferred(guardedBy(b)).subscribe(v -> {}, e -> {
              if (e instanceof CircuitBreakerOpenException) {
                rejected.incrementAndGet();
              }
            });
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            done.countDown();
          }
        });
      }
      start.countDown();
      assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
      return CALLERS;
    } finally {
      callers.shutdownNow();
    }
  }

  @Test
  void exactlyOneProbeAmongAThousandConcurrentCallers() throws InterruptedException {
    for (int round = 0; round < 20; round++) {
      CircuitBreaker b = Calls.on(clock, "search").minimumCalls(2).build();
      Calls.failTimes(b, 2);
      clock.advanceTimeBy(b.openDuration());
      AtomicInteger upstream = new AtomicInteger();
      AtomicInteger rejected = new AtomicInteger();
      Sinks.One<String> answer = Sinks.one();

      race(b, counting(upstream, answer.asMono()), rejected);

      assertThat(upstream).as("round %d: probes made", round).hasValue(1);
      assertThat(rejected).as("round %d: rejected", round).hasValue(CALLERS - 1);
      assertThat(b.state()).isEqualTo(State.HALF_OPEN);
      answer.tryEmitValue("ok");
      assertThat(b.state()).isEqualTo(State.CLOSED);
    }
  }

  @Test
  void exactlyTheConfiguredProbesAmongAThousandConcurrentCallers() throws InterruptedException {
    CircuitBreaker b = Calls.on(clock, "search").minimumCalls(2).halfOpenProbes(3).build();
    Calls.failTimes(b, 2);
    clock.advanceTimeBy(b.openDuration());
    AtomicInteger upstream = new AtomicInteger();
    AtomicInteger rejected = new AtomicInteger();

    race(b, counting(upstream, Mono.never()), rejected);

    assertThat(upstream).hasValue(3);
    assertThat(rejected).hasValue(CALLERS - 3);
  }

  @Test
  void cancelledProbesRacingNewCallersNeverLeaveTheBreakerStuck() throws InterruptedException {
    for (int round = 0; round < 50; round++) {
      CircuitBreaker b = Calls.on(clock, "search").minimumCalls(2).build();
      Calls.failTimes(b, 2);
      clock.advanceTimeBy(b.openDuration());
      AtomicInteger upstream = new AtomicInteger();
      Disposable probe = counting(upstream, Mono.never()).transformDeferred(guardedBy(b)).subscribe();
      Thread canceller = new Thread(probe::dispose);
      canceller.start();
      race(b, counting(upstream, Mono.never()), new AtomicInteger());
      canceller.join();

      // the permit came back: once every in-flight call is gone, a new call is admitted as the probe
      assertThat(b.state()).isEqualTo(State.HALF_OPEN);
      assertThat(upstream.get()).as("round %d: at most the first probe and one after its cancellation", round)
          .isBetween(1, 2);
    }
  }

  @Test
  void aCancelledProbeAlwaysGivesItsPermitBack() {
    CircuitBreaker b = Calls.on(clock, "search").minimumCalls(2).build();
    Calls.failTimes(b, 2);
    clock.advanceTimeBy(b.openDuration());
    for (int i = 0; i < 100; i++) {
      AtomicInteger upstream = new AtomicInteger();
      counting(upstream, Mono.never()).transformDeferred(guardedBy(b)).subscribe().dispose();
      assertThat(upstream).as("attempt %d admitted", i).hasValue(1);
    }
    assertThat(Calls.succeed(b)).isNull();
    assertThat(b.state()).isEqualTo(State.CLOSED);
    clock.advanceTimeBy(Duration.ofSeconds(1));
  }
}
