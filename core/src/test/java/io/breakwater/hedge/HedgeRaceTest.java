package io.breakwater.hedge;

import static io.breakwater.Breakwater.hedgedBy;
import static io.breakwater.hedge.HedgedByTest.fill;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.publisher.PublisherProbe;
import reactor.test.subscriber.TestSubscriber;
import reactor.test.util.RaceTestUtils;

/**
 * Signals that race on real threads: an answer against the hedge timer, a failure against the timer, two answers
 * against each other, an answer against the caller's cancellation. Whatever the interleaving, the caller gets one
 * outcome, and no attempt is left running.
 */
class HedgeRaceTest {

  static final int ROUNDS = 2000;

  /**
   * A scheduler that keeps the hedge timer's task so that the test can fire it on any thread. Its clock stands still
   * until {@link #fire()} moves it to the task's instant (a timer fires at its instant, never early).
   */
  static final class ManualTimer implements Scheduler {
    final AtomicReference<Runnable> task = new AtomicReference<>();
    final AtomicLong now = new AtomicLong();
    volatile long due;

    @Override
    public Disposable schedule(Runnable run) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Disposable schedule(Runnable run, long delay, TimeUnit unit) {
      due = now.get() + unit.toNanos(delay);
      task.set(run);
      return () -> task.compareAndSet(run, null);
    }

    @Override
    public long now(TimeUnit unit) {
      return unit.convert(now.get(), TimeUnit.NANOSECONDS);
    }

    void fire() {
      Runnable run = task.getAndSet(null);
      if (run != null) {
        now.accumulateAndGet(due, Math::max);
        run.run();
      }
    }

    @Override
    public Worker createWorker() {
      return Schedulers.immediate().createWorker();
    }
  }

  /** One hedged call whose attempts are sinks the test completes. */
  static final class Race {
    final ManualTimer timer = new ManualTimer();
    final List<Sinks.One<String>> attempts = new CopyOnWriteArrayList<>();
    final List<PublisherProbe<String>> probes = new CopyOnWriteArrayList<>();
    final TestSubscriber<String> caller = TestSubscriber.create();

    Race() {
      HedgePolicy policy = HedgePolicy.builder().name("race").delay(Duration.ofMillis(100)).budget(1.0)
          .scheduler(() -> timer).meterRegistry(new SimpleMeterRegistry()).build();
      fill(policy, 2);
      Mono.defer(() -> {
        Sinks.One<String> sink = Sinks.one();
        PublisherProbe<String> probe = PublisherProbe.of(sink.asMono());
        attempts.add(sink);
        probes.add(probe);
        return probe.mono();
      }).transformDeferred(hedgedBy(policy)).subscribe(caller);
    }

    /** Every attempt has answered or was cancelled: none is still subscribed. */
    void assertNoAttemptLeftRunning() {
      for (int i = 0; i < attempts.size(); i++) {
        assertThat(attempts.get(i).currentSubscriberCount()).as("attempt " + i + " left running").isZero();
      }
    }
  }

  @Test
  void anAnswerRacingTheTimerIsDeliveredOnceAndAnyHedgeIsCancelled() {
    for (int i = 0; i < ROUNDS; i++) {
      Race race = new Race();
      RaceTestUtils.race(() -> race.attempts.get(0).tryEmitValue("primary"), race.timer::fire);
      race.caller.block(Duration.ofSeconds(5));
      assertThat(race.caller.getReceivedOnNext()).containsExactly("primary");
      assertThat(race.caller.isTerminatedComplete()).isTrue();
      race.assertNoAttemptLeftRunning();
      if (race.probes.size() == 2) {
        race.probes.get(1).assertWasCancelled();
      }
    }
  }

  @Test
  void twoAnswersRacingGiveOneValueAndTheLoserIsCancelled() {
    for (int i = 0; i < ROUNDS; i++) {
      Race race = new Race();
      race.timer.fire();
      assertThat(race.attempts).hasSize(2);
      RaceTestUtils.race(() -> race.attempts.get(0).tryEmitValue("primary"),
          () -> race.attempts.get(1).tryEmitValue("hedge"));
      race.caller.block(Duration.ofSeconds(5));
      assertThat(race.caller.getReceivedOnNext()).hasSize(1);
      assertThat(race.caller.isTerminatedComplete()).isTrue();
      String winner = race.caller.getReceivedOnNext().get(0);
      race.probes.get(winner.equals("primary") ? 1 : 0).assertWasCancelled();
      race.probes.get(winner.equals("primary") ? 0 : 1).assertWasNotCancelled();
    }
  }

  @Test
  void aFailureRacingTheTimerEitherFailsTheCallWithNoHedgeLeftOrLetsTheHedgeAnswer() {
    IOException reset = new IOException("connection reset");
    for (int i = 0; i < ROUNDS; i++) {
      Race race = new Race();
      RaceTestUtils.race(() -> race.attempts.get(0).tryEmitError(reset), race.timer::fire);
      if (race.attempts.size() == 2 && !race.probes.get(1).wasCancelled()) {
        race.attempts.get(1).tryEmitValue("hedge");
        race.caller.block(Duration.ofSeconds(5));
        assertThat(race.caller.getReceivedOnNext()).containsExactly("hedge");
      } else {
        race.caller.block(Duration.ofSeconds(5));
        assertThat(race.caller.expectTerminalError()).isSameAs(reset);
      }
      race.assertNoAttemptLeftRunning();
    }
  }

  @Test
  void theCallersCancellationRacingAnAnswerLeavesNothingRunning() {
    for (int i = 0; i < ROUNDS; i++) {
      Race race = new Race();
      race.timer.fire();
      RaceTestUtils.race(() -> race.attempts.get(1).tryEmitValue("hedge"), race.caller::cancel);
      race.assertNoAttemptLeftRunning();
      assertThat(race.caller.getReceivedOnNext()).hasSizeLessThanOrEqualTo(1);
      assertThat(race.timer.task.get()).as("no timer left").isNull();
    }
  }

  @Test
  void theCallersCancellationRacingTheTimerLeavesNothingRunning() {
    for (int i = 0; i < ROUNDS; i++) {
      Race race = new Race();
      RaceTestUtils.race(race.timer::fire, race.caller::cancel);
      race.assertNoAttemptLeftRunning();
      for (PublisherProbe<String> probe : race.probes) {
        probe.assertWasCancelled();
      }
    }
  }
}
