package io.breakwater.deadline;

import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.testing.TaskCountingScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.context.Context;

/**
 * How a deadline's one timer meets the ends of a call that race it: an item, a cancellation from inside the item, a
 * subscription signalled from another thread, a per-call budget ending before the task's deadline or with it.
 */
class DeadlineTimerRaceTest {

  private static DeadlineSpec on(Scheduler clock, Duration budget) {
    return DeadlineSpec.builder(budget).scheduler(() -> clock).build();
  }

  @Test
  void aMonoWhoseItemArrivesInTimeIsNotFailedByItsCompletionComingAfterTheDeadline() {
    // A Mono's item meets the deadline (as it does for Reactor's Mono.timeout): the completion that follows it late
    // is passed on, not replaced by a timeout after the item.
    StepVerifier.withVirtualTime(() -> Mono.fromDirect(Flux.concat(
                Mono.delay(Duration.ofSeconds(1)).thenReturn(7),
                Mono.delay(Duration.ofSeconds(2)).then(Mono.<Integer>empty())))
            .transformDeferred(withDeadline(Duration.ofSeconds(2))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(1))
        .expectNext(7)
        .expectNoEvent(Duration.ofSeconds(2))
        .verifyComplete();
  }

  @Test
  void aCancelFromInsideAMonosItemReleasesTheTimerAndNothingFollows() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    Sinks.One<Integer> call = Sinks.one();
    List<String> signals = new ArrayList<>();
    call.asMono()
        .transformDeferred(perCallTimeout())
        .transformDeferred(withDeadline(on(clock, Duration.ofSeconds(10))))
        .subscribe(new BaseSubscriber<Integer>() {
          @Override
          protected void hookOnNext(Integer value) {
            signals.add("item " + value);
            cancel();   // re-entrant: the deadline subscriber is still delivering this item
          }

          @Override
          protected void hookOnComplete() {
            signals.add("complete");
          }

          @Override
          protected void hookOnError(Throwable e) {
            signals.add("error " + e);
          }
        });
    assertThat(clock.pendingTasks()).as("one timer for the deadline and the per-call budget").isEqualTo(1);

    call.tryEmitValue(42);
    virtual.advanceTimeBy(Duration.ofSeconds(11));

    assertThat(signals).containsExactly("item 42");
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void anOnSubscribeFromAnotherThreadAfterTheSubscriptionReturnedStillArmsTheTimerAtItsInstant()
      throws InterruptedException {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    Scheduler other = Schedulers.newSingle("late-on-subscribe");
    try {
      CountDownLatch subscribed = new CountDownLatch(1);
      AtomicReference<Throwable> error = new AtomicReference<>();
      AtomicInteger failedAtMillis = new AtomicInteger(-1);
      Mono.<Integer>fromDirect(actual -> other.schedule(() -> Mono.<Integer>never().subscribe(
              new Forwarding(actual, subscribed)), 10, TimeUnit.MILLISECONDS))
          .transformDeferred(withDeadline(on(virtual, Duration.ofSeconds(3))))
          .subscribe(v -> { }, e -> {
            error.set(e);
            failedAtMillis.set((int) virtual.now(TimeUnit.MILLISECONDS));
          });
      assertThat(subscribed.await(10, TimeUnit.SECONDS)).isTrue();

      virtual.advanceTimeBy(Duration.ofSeconds(3).minusNanos(1));
      assertThat(error).hasValue(null);
      virtual.advanceTimeBy(Duration.ofNanos(1));
      assertThat(error.get()).isInstanceOf(DeadlineExceededException.class);
      assertThat(failedAtMillis).hasValue(3_000);
    } finally {
      other.dispose();
    }
  }

  @Test
  void itemsAndTimersRacingOnTwoThreadsEndEveryCallExactlyOnceAndLeaveNoTimer() throws InterruptedException {
    Scheduler timers = Schedulers.newParallel("deadline-item-race", 2);
    Scheduler answers = Schedulers.newSingle("deadline-answers");
    TaskCountingScheduler clock = new TaskCountingScheduler(timers);
    try {
      int calls = 2_000;
      AtomicInteger values = new AtomicInteger();
      AtomicInteger timeouts = new AtomicInteger();
      AtomicInteger twice = new AtomicInteger();
      CountDownLatch ended = new CountDownLatch(calls);
      for (int i = 0; i < calls; i++) {
        Sinks.One<Integer> call = Sinks.one();
        AtomicInteger ends = new AtomicInteger();
        call.asMono()
            .transformDeferred(perCallTimeout(Duration.ofNanos(200_000 + (i % 7) * 50_000L)))
            .transformDeferred(withDeadline(on(clock, Duration.ofMillis(1))))
            .subscribe(v -> values.incrementAndGet(), e -> {
              timeouts.incrementAndGet();
              if (ends.incrementAndGet() > 1) {
                twice.incrementAndGet();
              }
              ended.countDown();
            }, () -> {
              if (ends.incrementAndGet() > 1) {
                twice.incrementAndGet();
              }
              ended.countDown();
            });
        answers.schedule(() -> call.tryEmitValue(1), (i % 5) * 100L, TimeUnit.MICROSECONDS);
      }
      assertThat(ended.await(30, TimeUnit.SECONDS)).as("every call ended").isTrue();
      Thread.sleep(20);   // any late second end would arrive now

      assertThat(twice).as("calls ended twice").hasValue(0);
      assertThat(values.get() + timeouts.get()).isEqualTo(calls);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (clock.pendingTasks() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(5);   // kept tasks run at their instants, a millisecond or so from now
      }
      assertThat(clock.pendingTasks()).as("tasks left on the scheduler").isZero();
    } finally {
      answers.dispose();
      timers.dispose();
    }
  }

  @Test
  void aPerCallBudgetBeforeTheDeadlineFiresAtItsExactInstantAsACallTimeout() {
    // 10 s task: the call gets min(20 s, 0.6 × 10 s) = 6 s; it times out at 6 s exactly, not a nanosecond earlier.
    StepVerifier.withVirtualTime(() -> Mono.never()
            .transformDeferred(perCallTimeout(Duration.ofSeconds(20)))
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(6).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(CallTimeoutException.class)
            .hasMessage("A call timed out after running 6s (its per-call time limit: 6s)"))
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void aPerCallBudgetThatWouldEndWithTheDeadlineLeavesItToTheDeadlineAtItsExactInstant() {
    // perCallFraction 1: the call's budget is all the task has left, so the task's deadline fires, at 10 s exactly.
    StepVerifier.withVirtualTime(() -> Mono.never()
            .transformDeferred(perCallTimeout(Duration.ofSeconds(20)))
            .transformDeferred(withDeadline(DeadlineSpec.builder(Duration.ofSeconds(10))
                .perCallFraction(1.0).perCallCap(Duration.ofSeconds(30)).build())))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(10).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(DeadlineExceededException.class)
            .hasMessage("Deadline 'deadline' exceeded: 10s of 10s used"))
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void callsOneAfterAnotherUnderADeadlineAndAPerCallBudgetTakeNoSchedulerTaskPerCall() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    DeadlineSpec spec = on(clock, Duration.ofSeconds(10));
    AtomicInteger completed = new AtomicInteger();
    for (int i = 0; i < 1_000; i++) {
      Sinks.One<Integer> call = Sinks.one();
      call.asMono()
          .transformDeferred(perCallTimeout())
          .transformDeferred(withDeadline(spec))
          .subscribe(v -> { }, e -> { }, completed::incrementAndGet);
      assertThat(clock.pendingTasks()).as("call %d: pending tasks", i).isEqualTo(1);
      call.tryEmitValue(i);
      virtual.advanceTimeBy(Duration.ofNanos(1_000));
    }
    assertThat(completed).hasValue(1_000);
    assertThat(clock.scheduledTasks()).as("tasks scheduled for 1 000 calls 1 µs apart, in all").isEqualTo(1);
    virtual.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void aDeadlineThatPassesWhileAnItemIsDeliveredCancelsUpstreamAtOnceAndFailsTheCallAfterTheItem() {
    // The subscriber's onNext takes so long that the deadline passes inside it (here: it advances virtual time).
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    Sinks.Many<Integer> items = Sinks.many().unicast().onBackpressureBuffer();
    AtomicBoolean cancelled = new AtomicBoolean();
    List<Object> signals = new ArrayList<>();
    items.asFlux()
        .doOnCancel(() -> cancelled.set(true))
        .transformDeferred(withDeadline(on(virtual, Duration.ofSeconds(1))))
        .subscribe(v -> {
          virtual.advanceTimeBy(Duration.ofSeconds(1));
          signals.add("item " + v + ", upstream cancelled: " + cancelled.get());
        }, e -> signals.add(e.getClass().getSimpleName()));

    items.tryEmitNext(1);
    assertThat(signals).containsExactly("item 1, upstream cancelled: true", "DeadlineExceededException");
  }

  @Test
  void anOnSubscribeSignalledLaterOnTheSubscribingThreadArmsTheTimerAtItsInstant() {
    // The source passes onSubscribe on the thread that subscribed, but only after its subscription has returned
    // (as a source driven by that thread's event loop does): the timer is armed then, for the deadline's instant.
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    AtomicReference<Subscriber<? super Integer>> source = new AtomicReference<>();
    List<Throwable> errors = new ArrayList<>();
    Mono.<Integer>fromDirect(s -> source.set(s))
        .transformDeferred(withDeadline(on(virtual, Duration.ofSeconds(3))))
        .subscribe(v -> { }, errors::add);

    virtual.advanceTimeBy(Duration.ofSeconds(1));
    source.get().onSubscribe(Operators.emptySubscription());
    virtual.advanceTimeBy(Duration.ofSeconds(2).minusNanos(1));
    assertThat(errors).isEmpty();
    virtual.advanceTimeBy(Duration.ofNanos(1));
    assertThat(errors).singleElement().isInstanceOf(DeadlineExceededException.class);
  }

  @Test
  void anOnSubscribeSignalledOnlyAfterTheDeadlinePassedFailsTheCallAtOnce() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    AtomicReference<Subscriber<? super Integer>> source = new AtomicReference<>();
    List<String> signals = new ArrayList<>();
    Mono.<Integer>fromDirect(s -> source.set(s))
        .transformDeferred(withDeadline(on(virtual, Duration.ofSeconds(3))))
        .subscribe(v -> { }, e -> signals.add(e.getClass().getSimpleName()), () -> signals.add("complete"));

    virtual.advanceTimeBy(Duration.ofSeconds(5));
    assertThat(signals).isEmpty();
    source.get().onSubscribe(Operators.emptySubscription());
    assertThat(signals).containsExactly("DeadlineExceededException");
  }

  @Test
  void aPerCallBudgetArmedWhileTheCallsFirstItemIsDeliveredOnAnotherThreadWaitsOnTheTimerAndFiresAtItsInstant()
      throws InterruptedException {
    // The per-call budget (6 s) arms when the subscription returns, while both deadlines are delivering the first
    // item on another thread: it still shares the call's one timer, and still times the call out at 6 s.
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    ItemDuringSubscription source = new ItemDuringSubscription(false);
    List<Object> signals = new ArrayList<>();
    source.flux()
        .transformDeferred(perCallTimeout())
        .transformDeferred(withDeadline(on(clock, Duration.ofSeconds(10))))
        .subscribe(v -> {
          source.hold();
          signals.add(v);
        }, signals::add);
    source.release();

    assertThat(signals).containsExactly(1);
    assertThat(clock.pendingTasks()).as("one timer for the deadline and the per-call budget").isEqualTo(1);
    virtual.advanceTimeBy(Duration.ofSeconds(6).minusNanos(1));
    assertThat(signals).hasSize(1);
    virtual.advanceTimeBy(Duration.ofNanos(1));
    assertThat(signals).last().isInstanceOf(CallTimeoutException.class);
  }

  @Test
  void aDeadlineWhoseSubscriptionReturnsWhileItsFirstItemIsDeliveredOnAnotherThreadStillArmsItsTimer()
      throws InterruptedException {
    // onSubscribe and the first item come on another thread; the subscription returns while that item is being
    // delivered: the timer is armed all the same and fires at the deadline's instant.
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    ItemDuringSubscription source = new ItemDuringSubscription(true);
    List<Object> signals = new ArrayList<>();
    source.flux()
        .transformDeferred(withDeadline(on(virtual, Duration.ofSeconds(10))))
        .subscribe(v -> {
          source.hold();
          signals.add(v);
        }, signals::add);
    source.release();

    virtual.advanceTimeBy(Duration.ofSeconds(10).minusNanos(1));
    assertThat(signals).containsExactly(1);
    virtual.advanceTimeBy(Duration.ofNanos(1));
    assertThat(signals).last().isInstanceOf(DeadlineExceededException.class);
  }

  /**
   * A source whose first item is delivered on another thread while its subscription is still under way: the
   * subscription returns only once the item has reached the end of the chain, which holds it ({@link #hold}) until
   * the test has seen the subscription return ({@link #release}). {@code onSubscribe} comes on the subscribing
   * thread, or first thing on the other one.
   */
  private static final class ItemDuringSubscription {
    private final boolean onSubscribeElsewhere;
    private final CountDownLatch delivering = new CountDownLatch(1);
    private final CountDownLatch returned = new CountDownLatch(1);
    private volatile Thread emitter;

    ItemDuringSubscription(boolean onSubscribeElsewhere) {
      this.onSubscribeElsewhere = onSubscribeElsewhere;
    }

    Flux<Integer> flux() {
      return Flux.from(actual -> {
        if (!onSubscribeElsewhere) {
          actual.onSubscribe(Operators.emptySubscription());
        }
        Thread t = new Thread(() -> {
          if (onSubscribeElsewhere) {
            actual.onSubscribe(Operators.emptySubscription());
          }
          actual.onNext(1);
        }, "item-during-subscription");
        emitter = t;
        t.start();
        await(delivering);
      });
    }

    /** At the end of the chain, on the other thread: the item is there; waits for the subscription to return. */
    void hold() {
      delivering.countDown();
      await(returned);
    }

    /** The subscription has returned: lets the item's delivery finish, and waits for it. */
    void release() throws InterruptedException {
      returned.countDown();
      emitter.join(TimeUnit.SECONDS.toMillis(10));
      assertThat(emitter.isAlive()).as("the item's delivery finished").isFalse();
    }

    private static void await(CountDownLatch latch) {
      try {
        assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
  }

  /** Passes everything on, and says when {@code onSubscribe} has been passed. */
  private static final class Forwarding implements CoreSubscriber<Integer> {
    private final Subscriber<? super Integer> actual;
    private final CountDownLatch subscribed;

    Forwarding(Subscriber<? super Integer> actual, CountDownLatch subscribed) {
      this.actual = actual;
      this.subscribed = subscribed;
    }

    @Override
    public Context currentContext() {
      return actual instanceof CoreSubscriber<?> core ? core.currentContext() : Context.empty();
    }

    @Override
    public void onSubscribe(Subscription s) {
      actual.onSubscribe(s);
      subscribed.countDown();
    }

    @Override
    public void onNext(Integer value) {
      actual.onNext(value);
    }

    @Override
    public void onError(Throwable e) {
      actual.onError(e);
    }

    @Override
    public void onComplete() {
      actual.onComplete();
    }
  }
}
