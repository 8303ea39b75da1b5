package io.breakwater.stream;

import static io.breakwater.Breakwater.idleTimeout;
import static io.breakwater.Breakwater.streamTimeouts;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.testing.TaskCountingScheduler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Issue 17 §2: idle and first-item timeouts fire exactly at last progress + d, to the nanosecond in virtual time,
 * with one timer per subscription; the coarse tick is an opt-in.
 */
class ExactStreamTimeoutsTest {

  @Test
  void theTestAUserWritesFirstPasses() {
    StepVerifier.withVirtualTime(() -> Flux.never().transformDeferred(idleTimeout(Duration.ofSeconds(5))))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(4_999))
        .thenAwait(Duration.ofMillis(1))
        .expectError(TimeoutException.class)
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void anIdleTimeoutFiresToTheNanosecondAfterTheLastProgressItem() {
    SplittableRandom random = new SplittableRandom(0x17_2L);
    for (int round = 0; round < 200; round++) {
      VirtualTimeScheduler vts = VirtualTimeScheduler.create();
      long idle = 1 + random.nextLong(5_000_000_000L);
      Sinks.Many<String> tokens = Sinks.many().unicast().onBackpressureBuffer();
      AtomicLong failedAt = new AtomicLong(-1);
      Disposable d = tokens.asFlux().transformDeferred(streamTimeouts(StreamTimeouts.builder()
              .idle(Duration.ofNanos(idle)).scheduler(() -> vts).meterRegistry(new SimpleMeterRegistry()).build()))
          .subscribe(x -> {}, e -> failedAt.set(vts.now(TimeUnit.NANOSECONDS)));
      long last = 0;
      int items = random.nextInt(6);
      for (int i = 0; i < items; i++) {
        long gap = random.nextLong(idle);   // shorter than the timeout: no stall yet
        vts.advanceTimeBy(Duration.ofNanos(gap));
        last += gap;
        tokens.tryEmitNext("tok");
      }
      vts.advanceTimeBy(Duration.ofNanos(idle - 1));
      assertThat(failedAt).as("round %d: 1 ns before last progress + idle", round).hasValue(-1);
      vts.advanceTimeBy(Duration.ofNanos(1));
      assertThat(failedAt).as("round %d: at last progress %d + idle %d", round, last, idle).hasValue(last + idle);
      d.dispose();
    }
  }

  @Test
  void aFirstItemTimeoutThenAnIdleTimeoutFireExactlyAndHeartbeatsDoNotCount() {
    VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    Sinks.Many<String> events = Sinks.many().unicast().onBackpressureBuffer();
    AtomicReference<Throwable> error = new AtomicReference<>();
    AtomicLong at = new AtomicLong(-1);
    events.asFlux().transformDeferred(streamTimeouts(StreamTimeouts.builder().firstItem(Duration.ofSeconds(10))
            .idle(Duration.ofSeconds(2)).scheduler(() -> vts).meterRegistry(new SimpleMeterRegistry()).build(),
        (String e) -> !e.equals("ping")))
        .subscribe(x -> {}, e -> {
          error.set(e);
          at.set(vts.now(TimeUnit.MILLISECONDS));
        });
    vts.advanceTimeBy(Duration.ofMillis(9_000));
    events.tryEmitNext("ping");
    vts.advanceTimeBy(Duration.ofMillis(999));
    events.tryEmitNext("token");   // at 9 999 ms: the first progress item
    vts.advanceTimeBy(Duration.ofMillis(1_500));
    events.tryEmitNext("ping");    // no progress
    vts.advanceTimeBy(Duration.ofMillis(499));
    assertThat(at).hasValue(-1);
    vts.advanceTimeBy(Duration.ofMillis(1));
    assertThat(at).as("idle 2 s after the token at 9 999 ms").hasValue(11_999);
    assertThat(error.get()).isInstanceOf(IdleTimeoutException.class);
    assertThat(((IdleTimeoutException) error.get()).sinceProgress()).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void exactModeKeepsOneTimerPerSubscriptionHoweverManyItems() {
    VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    TaskCountingScheduler counting = new TaskCountingScheduler(vts);
    Disposable d = Flux.interval(Duration.ofMillis(1), vts).take(10_000)
        .transformDeferred(streamTimeouts(StreamTimeouts.builder().idle(Duration.ofSeconds(1))
            .scheduler(() -> counting).meterRegistry(new SimpleMeterRegistry()).build()))
        .subscribe();
    vts.advanceTimeBy(Duration.ofSeconds(5));
    assertThat(counting.scheduledTasks()).as("re-armed about once per timeout, not once per item")
        .isLessThanOrEqualTo(12);
    assertThat(counting.pendingTasks()).isLessThanOrEqualTo(1);
    d.dispose();
    assertThat(counting.pendingTasks()).isZero();
  }

  @Test
  void aTimeoutThatFindsAnItemBeingDeliveredChecksEveryQuarterUntilItReturnsThenSignalsOnceAndLeavesNoTask() {
    // The consumer holds its item from 1 s to 11 s of virtual time (it advances the clock inside onNext, so the timer
    // runs on this thread while the item is being delivered). The idle timeout (4 s) is decided at 5 s; the timer
    // then checks every second (4 s / 4) for the delivery's end, which it must see even if the emitting thread, once
    // its item returns, does not see the decision.
    VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    TaskCountingScheduler counting = new TaskCountingScheduler(vts);
    Sinks.Many<String> source = Sinks.many().unicast().onBackpressureBuffer();
    java.util.List<String> seen = new java.util.ArrayList<>();
    source.asFlux()
        .transformDeferred(streamTimeouts(StreamTimeouts.builder().idle(Duration.ofSeconds(4))
            .scheduler(() -> counting).meterRegistry(new SimpleMeterRegistry()).build()))
        .subscribe(item -> {
          vts.advanceTimeBy(Duration.ofSeconds(10));
          seen.add(item + " returned at " + vts.now(TimeUnit.SECONDS) + " s, tasks so far "
              + counting.scheduledTasks());
        }, e -> seen.add(e.getClass().getSimpleName() + " at " + vts.now(TimeUnit.SECONDS) + " s"));
    vts.advanceTimeBy(Duration.ofSeconds(1));
    source.tryEmitNext("slow");
    assertThat(seen).containsExactly(
        // the timer armed at 0 s, re-armed at 4 s for the item's 5 s, then checks for 6, 7, ..., 12 s (the last pending)
        "slow returned at 11 s, tasks so far 9",
        "IdleTimeoutException at 11 s");
    assertThat(counting.pendingTasks()).as("the pending check is released with the error").isZero();
    vts.advanceTimeBy(Duration.ofMinutes(1));
    assertThat(seen).hasSize(2);
    assertThat(counting.scheduledTasks()).isEqualTo(9);
  }

  @Test
  void theCoarseTickIsAnOptIn() {
    VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    StreamTimeouts coarse = StreamTimeouts.builder().idle(Duration.ofSeconds(4)).coarse().scheduler(() -> vts)
        .meterRegistry(new SimpleMeterRegistry()).build();
    assertThat(coarse.coarse()).isTrue();
    assertThat(StreamTimeouts.builder().idle(Duration.ofSeconds(4)).build().coarse()).isFalse();
    AtomicLong at = new AtomicLong(-1);
    Flux.concat(Mono.delay(Duration.ofMillis(500), vts), Flux.never())
        .transformDeferred(streamTimeouts(coarse))
        .subscribe(x -> {}, e -> at.set(vts.now(TimeUnit.MILLISECONDS)));
    vts.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(at.get()).as("detected within a tick (d/4) after last progress + d").isBetween(4_500L, 5_500L);
  }
}
