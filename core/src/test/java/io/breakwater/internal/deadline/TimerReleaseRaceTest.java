package io.breakwater.internal.deadline;

import static io.breakwater.Breakwater.hedgedBy;
import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.hedge.HedgePolicy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A call's end racing the filing of its timer on another thread: the timer is filed in the subscribing thread's wheel
 * while the answer arrives on a second thread and releases it. Whatever the interleaving, once both are done no timer
 * of the call is left filed, and the call ends once.
 */
class TimerReleaseRaceTest {

  private static final int ROUNDS = 20_000;

  private Scheduler clock;

  @BeforeEach
  void setUp() {
    clock = Schedulers.newSingle("timer-release-race");
  }

  @AfterEach
  void tearDown() {
    clock.dispose();
  }

  @Test
  void aCallAnsweredOnAnotherThreadWhileItsDeadlineIsFiledLeavesNoTimerFiled() throws Exception {
    DeadlineSpec spec = DeadlineSpec.builder(Duration.ofSeconds(30)).scheduler(() -> clock).build();
    raceAnswersWithSubscriptions(1, calls -> calls.get(0).transformDeferred(withDeadline(spec)));
  }

  @Test
  void aPerCallBudgetFilingItsOwnTimerWhileItsCallEndsOnAnotherThreadLeavesNoTimerFiled() throws Exception {
    // The first per-call budget shares the deadline's timer; the second, beside it, files its own.
    DeadlineSpec spec = DeadlineSpec.builder(Duration.ofSeconds(30)).scheduler(() -> clock).build();
    raceAnswersWithSubscriptions(2, calls -> Mono.zip(
            calls.get(0).transformDeferred(perCallTimeout(Duration.ofSeconds(20))),
            calls.get(1).transformDeferred(perCallTimeout(Duration.ofSeconds(10))), Integer::sum)
        .transformDeferred(withDeadline(spec)));
  }

  @Test
  void aHedgedCallAnsweredOnAnotherThreadWhileItsHedgeTimerIsFiledLeavesNoTimerFiled() throws Exception {
    HedgePolicy policy = HedgePolicy.builder().name("race").delay(Duration.ofSeconds(30)).scheduler(() -> clock)
        .meterRegistry(new SimpleMeterRegistry()).build();
    raceAnswersWithSubscriptions(1, calls -> calls.get(0).transformDeferred(hedgedBy(policy)));
  }

  /**
   * Round after round, subscribes a call made of {@code width} pending answers on this thread while another thread
   * answers them, both released at once; then checks that the call ended once and that this thread's wheel holds no
   * timer.
   */
  private void raceAnswersWithSubscriptions(int width, Function<List<Mono<Integer>>, Mono<Integer>> call)
      throws Exception {
    CyclicBarrier start = new CyclicBarrier(2);
    CyclicBarrier done = new CyclicBarrier(2);
    AtomicReference<List<Sinks.One<Integer>>> answers = new AtomicReference<>();
    AtomicReference<Throwable> answererFailed = new AtomicReference<>();
    Thread answerer = new Thread(() -> {
      try {
        for (int round = 0; round < ROUNDS; round++) {
          start.await();
          spin();
          for (Sinks.One<Integer> answer : answers.get()) {
            answer.emitValue(1, Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1)));
          }
          done.await();
        }
      } catch (Throwable e) {
        answererFailed.set(e);
      }
    }, "timer-release-answerer");
    answerer.start();
    AtomicInteger ended = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    TimerWheel wheel = TimerWheel.of(clock);
    try {
      for (int round = 0; round < ROUNDS; round++) {
        List<Sinks.One<Integer>> sinks = new ArrayList<>();
        for (int i = 0; i < width; i++) {
          sinks.add(Sinks.one());
        }
        answers.set(sinks);
        Mono<Integer> subscribed = call.apply(sinks.stream().map(Sinks.One::asMono).toList());
        start.await(5, TimeUnit.SECONDS);
        spin();
        subscribed.subscribe(v -> { }, e -> failed.incrementAndGet(), ended::incrementAndGet);
        done.await(5, TimeUnit.SECONDS);
        assertThat(wheel.filed()).as("timers left filed after round %d", round).isZero();
      }
    } finally {
      answerer.join(TimeUnit.SECONDS.toMillis(10));
    }
    assertThat(answererFailed.get()).isNull();
    assertThat(failed.get()).as("calls failed").isZero();
    assertThat(ended.get()).as("calls completed").isEqualTo(ROUNDS);
  }

  /** A few hundred nanoseconds at random, so that the two threads meet at every point of each other's work. */
  private static void spin() {
    int n = ThreadLocalRandom.current().nextInt(64);
    long sink = 0;
    for (int i = 0; i < n; i++) {
      sink += i * 31L;
    }
    if (sink == 42) {
      Thread.onSpinWait();
    }
  }
}
