package io.breakwater.internal.deadline;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.testing.DelegatingScheduler;
import io.breakwater.testing.TaskCountingScheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.test.StepVerifier;
import reactor.test.publisher.PublisherProbe;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.test.util.RaceTestUtils;

class WheelTimeoutTest {

  private static final long TWO_SECONDS = Duration.ofSeconds(2).toNanos();

  @Test
  void aCallWithoutAnswerFailsWithATimeoutAtExactlyItsBoundAndIsCancelled() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    PublisherProbe<Integer> call = PublisherProbe.of(Mono.never());

    StepVerifier.create(new WheelTimeout<>(call.mono(), TWO_SECONDS, clock))
        .expectSubscription()
        .then(() -> clock.advanceTimeBy(Duration.ofMillis(1999)))
        .expectNoEvent(Duration.ofMillis(10))
        .then(() -> clock.advanceTimeBy(Duration.ofMillis(1)))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(TimeoutException.class)
            .hasMessage("Did not observe any item or terminal signal within 2000ms"))
        .verify(Duration.ofSeconds(5));
    call.assertWasCancelled();
  }

  @Test
  void aValueInTimeUnfilesTheTimerAndItsCompletionPassesThrough() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    Sinks.One<Integer> call = Sinks.one();

    StepVerifier.create(new WheelTimeout<>(call.asMono(), TWO_SECONDS, clock))
        .expectSubscription()
        .then(() -> assertThat(TimerWheel.of(clock).filed()).isEqualTo(1))
        .then(() -> clock.advanceTimeBy(Duration.ofMillis(1999)))
        .then(() -> call.tryEmitValue(42))
        .expectNext(42)
        .expectComplete()
        .verify(Duration.ofSeconds(5));
    assertThat(TimerWheel.of(clock).filed()).isZero();
    clock.advanceTimeBy(Duration.ofSeconds(10));   // nothing fires later
  }

  @Test
  void aCallThatAnswersDuringItsSubscriptionArmsNoTimer() {
    TaskCountingScheduler clock = new TaskCountingScheduler(VirtualTimeScheduler.create());

    StepVerifier.create(new WheelTimeout<>(Mono.just(1), TWO_SECONDS, clock))
        .expectNext(1)
        .expectComplete()
        .verify(Duration.ofSeconds(5));
    assertThat(clock.scheduledTasks()).isZero();
    assertThat(TimerWheel.of(clock).filed()).isZero();
  }

  @Test
  void anErrorPassesThroughAndUnfilesTheTimer() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    Sinks.One<Integer> call = Sinks.one();
    IllegalStateException failure = new IllegalStateException("store down");

    StepVerifier.create(new WheelTimeout<>(call.asMono(), TWO_SECONDS, clock))
        .expectSubscription()
        .then(() -> call.tryEmitError(failure))
        .expectErrorSatisfies(e -> assertThat(e).isSameAs(failure))
        .verify(Duration.ofSeconds(5));
    assertThat(TimerWheel.of(clock).filed()).isZero();
  }

  @Test
  void cancellingUnfilesTheTimerCancelsTheCallAndSignalsNothing() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    PublisherProbe<Integer> call = PublisherProbe.of(Mono.never());
    List<Object> signals = new CopyOnWriteArrayList<>();

    new WheelTimeout<>(call.mono(), TWO_SECONDS, clock).subscribe(signals::add, signals::add).dispose();
    clock.advanceTimeBy(Duration.ofSeconds(5));

    call.assertWasCancelled();
    assertThat(TimerWheel.of(clock).filed()).isZero();
    assertThat(signals).isEmpty();
  }

  @Test
  void aSourceThatSignalsOnSubscribeLaterFromAnotherThreadIsStillBounded() throws InterruptedException {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    AtomicReference<CoreSubscriber<? super Integer>> subscriber = new AtomicReference<>();
    Mono<Integer> late = new Mono<>() {
      @Override
      public void subscribe(CoreSubscriber<? super Integer> actual) {
        subscriber.set(actual);   // onSubscribe comes later, from elsewhere
      }
    };
    List<Object> signals = new CopyOnWriteArrayList<>();
    new WheelTimeout<>(late, TWO_SECONDS, clock).subscribe(new BaseSubscriber<Integer>() {
      @Override
      protected void hookOnError(Throwable e) {
        signals.add(e);
      }
    });
    Thread other = new Thread(() -> subscriber.get().onSubscribe(Operators.emptySubscription()));
    other.start();
    other.join();

    clock.advanceTimeBy(Duration.ofSeconds(2));
    assertThat(signals).singleElement().isInstanceOf(TimeoutException.class);
  }

  @Test
  void aValueRacingTheTimeoutEndsTheCallExactlyOnce() {
    for (int i = 0; i < 500; i++) {
      VirtualTimeScheduler clock = VirtualTimeScheduler.create();
      Sinks.One<Integer> call = Sinks.one();
      List<Object> signals = new CopyOnWriteArrayList<>();
      new WheelTimeout<>(call.asMono(), TWO_SECONDS, clock).subscribe(signals::add, signals::add,
          () -> signals.add("complete"));

      RaceTestUtils.race(() -> call.tryEmitValue(42), () -> clock.advanceTimeBy(Duration.ofSeconds(2)));

      boolean answered = signals.equals(List.of(42, "complete"));
      boolean timedOut = signals.size() == 1 && signals.get(0) instanceof TimeoutException;
      assertThat(answered || timedOut).as("round %d: %s", i, signals).isTrue();
      assertThat(TimerWheel.of(clock).filed()).isZero();
    }
  }

  @Test
  void aTimerItsSchedulerRefusesIsNotLeftFiledAndTheCallFailsWithTheRefusal() {
    RefusingScheduler clock = new RefusingScheduler(VirtualTimeScheduler.create());
    List<Object> signals = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 3; i++) {
      Sinks.One<Integer> call = Sinks.one();
      new WheelTimeout<>(call.asMono(), TWO_SECONDS, clock).subscribe(signals::add, signals::add);
    }
    assertThat(signals).hasSize(3).allMatch(e -> e instanceof RejectedExecutionException);
    assertThat(TimerWheel.of(clock).filed()).as("timers left filed after their calls failed").isZero();
  }

  @Test
  void theBoundRunsFromOnSubscribeAsReactorsTimeoutDoes() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    // a source that signals onSubscribe, then works 1.5 s on the subscribing thread before its subscribe returns
    Mono<Integer> slowToSubscribe = new Mono<>() {
      @Override
      public void subscribe(CoreSubscriber<? super Integer> actual) {
        actual.onSubscribe(Operators.emptySubscription());
        clock.advanceTimeBy(Duration.ofMillis(1500));
      }
    };
    List<Object> signals = new CopyOnWriteArrayList<>();
    new WheelTimeout<>(slowToSubscribe, TWO_SECONDS, clock).subscribe(signals::add, signals::add);
    clock.advanceTimeBy(Duration.ofMillis(499));
    assertThat(signals).isEmpty();

    clock.advanceTimeBy(Duration.ofMillis(1));   // 2 s after onSubscribe, 0.5 s after the subscription returned
    assertThat(signals).singleElement().isInstanceOf(TimeoutException.class);
  }

  /** A scheduler that refuses delayed tasks, as a disposed one does. */
  static final class RefusingScheduler extends DelegatingScheduler {
    RefusingScheduler(Scheduler delegate) {
      super(delegate);
    }

    @Override
    public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
      throw new RejectedExecutionException("refused");
    }
  }
}
