package io.breakwater.internal.deadline;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.testing.TaskCountingScheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;
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
}
