package io.breakwater.internal.limit;

import static io.breakwater.Breakwater.limitedBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.failure.FailureClassifier;
import io.breakwater.internal.ContextKeys;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.LimitExceededException.Reason;
import io.breakwater.testing.DelegatingScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.test.publisher.TestPublisher;
import reactor.test.scheduler.VirtualTimeScheduler;

class SharedConcurrencyLimitTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
  private final FakePermitStore store = new FakePermitStore(clock);

  @AfterEach
  void stop() {
    clock.dispose();
  }

  private ConcurrencyLimit instance(int limit, boolean failOpen) {
    return ConcurrencyEngine.shared(new ConcurrencySettings("search", limit, null, Duration.ofSeconds(30), 1000,
        FailureClassifier.defaults(), () -> clock),
        new SharedSettings(Duration.ofMillis(500), Duration.ofSeconds(3), Duration.ofMillis(50), failOpen), store);
  }

  private ConcurrencyLimit instance(int limit, Duration maxWait, int maxQueue) {
    return ConcurrencyEngine.shared(new ConcurrencySettings("search", limit, null, maxWait, maxQueue,
        FailureClassifier.defaults(), () -> clock),
        new SharedSettings(Duration.ofMillis(500), Duration.ofSeconds(3), Duration.ofMillis(50), true), store);
  }

  private static List<Throwable> refusals(ConcurrencyLimit limit, int calls) {
    List<Throwable> errors = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      Mono.just("x").transformDeferred(limitedBy(limit)).subscribe(v -> {}, errors::add);
    }
    return errors;
  }

  @Test
  void aPollIntervalBelowOneMillisecondIsRefusedNotABusyLoopOfStoreCalls() {
    assertThat(new SharedSettings(Duration.ofMillis(500), Duration.ofSeconds(3), Duration.ofMillis(1), true)
        .pollInterval()).isEqualTo(Duration.ofMillis(1));
    assertThatThrownBy(() -> new SharedSettings(Duration.ofMillis(500), Duration.ofSeconds(3), Duration.ofNanos(1),
        true))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Shared limit pollInterval is PT0.000000001S: give 1 ms or more (a queued call asks the store "
            + "again after each)");
  }

  @Test
  void aTaskThatFillsItsShareOfTheQueueLeavesRoomForAnotherTask() {
    ConcurrencyLimit limit = instance(1, Duration.ofSeconds(30), 4);
    TestPublisher<String> holder = TestPublisher.create();
    holder.mono().transformDeferred(limitedBy(limit)).subscribe();
    Object task = new Object();
    Object other = new Object();
    List<Object> first = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      Mono.just("a" + i).transformDeferred(limitedBy(limit)).contextWrite(c -> c.put(ContextKeys.TASK_STATE, task))
          .subscribe(first::add, e -> first.add(((LimitExceededException) e).reason()));
    }
    assertThat(first).as("the task's calls past its share of 2").containsExactly(Reason.QUEUE_FULL, Reason.QUEUE_FULL);
    List<Object> second = new ArrayList<>();
    Mono.just("b").transformDeferred(limitedBy(limit)).contextWrite(c -> c.put(ContextKeys.TASK_STATE, other))
        .subscribe(second::add, second::add);
    assertThat(second).as("the other task's call waits").isEmpty();
    assertThat(limit.queued()).isEqualTo(3);
    holder.complete();
    clock.advanceTimeBy(Duration.ofSeconds(1));
    assertThat(second).containsExactly("b");
    assertThat(first).contains("a0", "a1");
  }

  @Test
  void aCallThatMayNotWaitIsRefusedAtOnceWhenTheStoreHasNoPermitSayingWhy() {
    for (ConcurrencyLimit limit : List.of(instance(1, Duration.ZERO, 1000), instance(1, Duration.ofSeconds(30), 0))) {
      TestPublisher<String> holder = TestPublisher.create();
      holder.mono().transformDeferred(limitedBy(limit)).subscribe();
      holder.assertWasSubscribed();
      assertThat(refusals(limit, 1)).singleElement().satisfies(e -> {
        assertThat(((LimitExceededException) e).reason()).isEqualTo(Reason.WOULD_WAIT_TOO_LONG);
        assertThat(e).hasMessage("Limit 'search' refused the call: all 1 permits of fake semaphore are taken and "
            + "it does not queue calls");
      });
      assertThat(limit.queued()).isZero();
      holder.complete();
    }
  }

  @Test
  void aCallWhoseDeadlineHasPassedIsRefusedAtOnceSayingSo() {
    ConcurrencyLimit limit = instance(1, true);
    TestPublisher<String> holder = TestPublisher.create();
    holder.mono().transformDeferred(limitedBy(limit)).subscribe();
    Deadline passed = Deadline.start(DeadlineSpec.builder(Duration.ofSeconds(1)).scheduler(() -> clock).build(),
        clock);
    clock.advanceTimeBy(Duration.ofSeconds(1));   // exactly at the deadline: no time left
    List<Throwable> errors = new ArrayList<>();
    Mono.just("late").transformDeferred(limitedBy(limit)).contextWrite(ctx -> ctx.put(ContextKeys.DEADLINE, passed))
        .subscribe(v -> {}, errors::add);
    assertThat(errors).singleElement().satisfies(e -> assertThat(e).hasMessage("Limit 'search' refused the call: "
        + "all 1 permits of fake semaphore are taken and the deadline in force has passed"));

    errors.clear();
    Mono.just("waits").transformDeferred(limitedBy(limit)).subscribe();
    Mono.just("late").transformDeferred(limitedBy(limit)).contextWrite(ctx -> ctx.put(ContextKeys.DEADLINE, passed))
        .subscribe(v -> {}, errors::add);
    assertThat(errors).as("behind a waiting call: refused without asking the store").singleElement()
        .satisfies(e -> assertThat(e).hasMessage("Limit 'search' refused the call: calls already wait for a permit "
            + "of fake semaphore and the deadline in force has passed"));
    assertThat(limit.queued()).isEqualTo(1);
  }

  @Test
  void theHeadAsksForTheReleasedPermitOnceTheStoreHasItBack() {
    PermitStore slowRelease = new PermitStore() {   // a release answers after 20 ms, a request after 5 ms
      @Override
      public Mono<Void> limit(int permits) {
        return store.limit(permits);
      }

      @Override
      public Mono<String> tryAcquire(Duration lease) {
        return Mono.delay(Duration.ofMillis(5), clock).then(store.tryAcquire(lease));
      }

      @Override
      public Mono<Void> release(String id) {
        return Mono.delay(Duration.ofMillis(20), clock).then(store.release(id));
      }

      @Override
      public Mono<Boolean> renew(String id, Duration lease) {
        return store.renew(id, lease);
      }
    };
    ConcurrencyLimit limit = ConcurrencyEngine.shared(new ConcurrencySettings("search", 1, null,
        Duration.ofSeconds(30), 1000, FailureClassifier.defaults(), () -> clock),
        new SharedSettings(Duration.ofSeconds(30), Duration.ofSeconds(3), Duration.ofSeconds(1), true), slowRelease);
    TestPublisher<String> holder = TestPublisher.create();
    holder.mono().transformDeferred(limitedBy(limit)).subscribe();
    clock.advanceTimeBy(Duration.ofMillis(5));
    holder.assertWasSubscribed();
    TestPublisher<String> next = TestPublisher.create();
    next.mono().transformDeferred(limitedBy(limit)).subscribe();
    clock.advanceTimeBy(Duration.ofMillis(10));   // asked, no permit: polls again in 1 s

    holder.complete();
    clock.advanceTimeBy(Duration.ofMillis(30));
    next.assertWasSubscribed();
  }

  @Test
  void aFullQueueRefusesTheNextCallAtOnce() {
    ConcurrencyLimit limit = instance(1, Duration.ofSeconds(30), 1);
    TestPublisher<String> holder = TestPublisher.create();
    holder.mono().transformDeferred(limitedBy(limit)).subscribe();
    List<Throwable> errors = refusals(limit, 2);
    assertThat(limit.queued()).isEqualTo(1);
    assertThat(errors).singleElement().satisfies(e -> {
      assertThat(((LimitExceededException) e).reason()).isEqualTo(Reason.QUEUE_FULL);
      assertThat(e).hasMessageEndingWith("1 calls already wait for a permit of fake semaphore");
    });
  }

  @Test
  void aWaiterThatGetsNoPermitWithinItsMaxWaitIsRefusedWhenItRunsOut() {
    ConcurrencyLimit limit = instance(1, Duration.ofSeconds(2), 1000);
    TestPublisher<String> holder = TestPublisher.create();
    holder.mono().transformDeferred(limitedBy(limit)).subscribe();
    List<Throwable> errors = refusals(limit, 1);
    clock.advanceTimeBy(Duration.ofMillis(1_999));
    assertThat(errors).isEmpty();
    clock.advanceTimeBy(Duration.ofMillis(1));
    assertThat(errors).singleElement().satisfies(e ->
        assertThat(((LimitExceededException) e).reason()).isEqualTo(Reason.WAITED_TOO_LONG));
    assertThat(limit.queued()).isZero();
  }

  @Test
  void aPermitGivenBackGoesToTheNextWaiterOfTheSameInstanceAtOnce() {
    ConcurrencyLimit limit = instance(1, true);
    TestPublisher<String> holder = TestPublisher.create();
    holder.mono().transformDeferred(limitedBy(limit)).subscribe();
    List<String> answers = new ArrayList<>();
    Mono.just("next").transformDeferred(limitedBy(limit)).subscribe(answers::add);
    holder.complete();
    assertThat(answers).as("without waiting for the next poll").containsExactly("next");
  }

  @Test
  void aMonoGivesItsSharedPermitBackWithItsValueSoTheCallItsValueStartsFindsItFree() {
    // Mono.subscribe(value, error, complete) takes the value as the end of the call: what its value starts (and what
    // its caller reads, as RedisConcurrencyLimitIT's count of permits in flight) comes before the source's onComplete
    ConcurrencyLimit limit = instance(1, Duration.ZERO, 1000);
    TestPublisher<String> first = TestPublisher.create();
    List<Object> seen = new ArrayList<>();
    first.mono().transformDeferred(limitedBy(limit)).subscribe(v -> {
      seen.add(v);
      seen.add(limit.inFlight());
      Mono.just("second").transformDeferred(limitedBy(limit)).subscribe(seen::add, seen::add);
    });
    first.next("first");
    assertThat(seen).containsExactly("first", 0, "second");
    first.complete();
    assertThat(limit.inFlight()).isZero();
    assertThat(store.held()).isZero();
  }

  @Test
  void aLeaseFoundLostIsNoLongerRenewed() {
    ConcurrencyLimit limit = instance(1, true);
    TestPublisher<String> call = TestPublisher.create();
    call.mono().transformDeferred(limitedBy(limit)).subscribe();
    clock.advanceTimeBy(Duration.ofSeconds(1));
    assertThat(store.renewals).isEqualTo(1);
    store.down = true;   // the renewals time out while the 3 s lease runs out in the store
    clock.advanceTimeBy(Duration.ofSeconds(4));
    store.down = false;
    clock.advanceTimeBy(Duration.ofSeconds(2));
    assertThat(store.renewals).as("the renewal that found the permit gone").isEqualTo(2);
    clock.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(store.renewals).as("no renewal of a permit the store no longer holds").isEqualTo(2);
    call.complete();
  }

  @Test
  void aFinishedCallsLeaseIsNoLongerRenewed() {
    ConcurrencyLimit limit = instance(1, true);
    TestPublisher<String> call = TestPublisher.create();
    call.mono().transformDeferred(limitedBy(limit)).subscribe();
    clock.advanceTimeBy(Duration.ofSeconds(3));
    assertThat(store.renewals).as("every third of the 3 s lease").isEqualTo(3);
    call.complete();
    clock.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(store.renewals).isEqualTo(3);
  }

  @Test
  void aLeaseIsRenewedByOneShotTimersSoACallEndingOnAnEventLoopStopsItsRenewalWithoutParking() {
    // Cancelling a periodic task takes the scheduler's queue lock, which BlockHound rejects on an event loop when it
    // is contended: the CI saw the call's end throw there and its permit never came back. Only one-shot timers here.
    Scheduler oneShotOnly = new DelegatingScheduler(clock) {
      @Override
      public Disposable schedulePeriodically(Runnable task, long initialDelay, long period, TimeUnit unit) {
        throw new AssertionError("a periodic task");
      }

      @Override
      public Worker createWorker() {
        throw new AssertionError("a worker (Flux.interval's periodic task)");
      }
    };
    ConcurrencyLimit limit = ConcurrencyEngine.shared(new ConcurrencySettings("search", 1, null,
        Duration.ofSeconds(30), 1000, FailureClassifier.defaults(), () -> oneShotOnly),
        new SharedSettings(Duration.ofMillis(500), Duration.ofSeconds(3), Duration.ofMillis(50), true), store);
    TestPublisher<String> call = TestPublisher.create();
    List<Object> seen = new ArrayList<>();
    call.mono().transformDeferred(limitedBy(limit)).subscribe(seen::add, seen::add);
    clock.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(store.renewals).as("every third of the 3 s lease").isEqualTo(10);
    assertThat(store.held()).isEqualTo(1);
    call.emit("done");
    assertThat(seen).containsExactly("done");
    assertThat(limit.inFlight()).isZero();
    assertThat(store.held()).isZero();
    clock.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(store.renewals).isEqualTo(10);
  }

  @Test
  void whileTheStoreIsDownCallsGoThroughTheLocalLimitWithoutWaitingForItAgain() {
    ConcurrencyLimit limit = instance(2, true);
    store.down = true;
    List<Long> ranAt = new ArrayList<>();
    Mono<Long> call = Mono.fromCallable(() -> clock.now(java.util.concurrent.TimeUnit.MILLISECONDS));
    call.transformDeferred(limitedBy(limit)).subscribe(ranAt::add);
    clock.advanceTimeBy(Duration.ofMillis(700));
    call.transformDeferred(limitedBy(limit)).subscribe(ranAt::add);
    assertThat(ranAt).as("the first waited for the store's timeout; the second did not ask it")
        .containsExactly(500L, 700L);
  }

  @Test
  void itsTextSaysTheSharedLimitItsStoreWhatIsHereAndWhatItDoesWhenTheStoreIsDown() {
    ConcurrencyLimit limit = instance(3, true);
    assertThat(limit.limit()).isEqualTo(3);
    TestPublisher<String> holder = TestPublisher.create();
    holder.mono().transformDeferred(limitedBy(limit)).subscribe();
    assertThat(limit).hasToString("ConcurrencyLimit{search, shared 3 in fake semaphore, in flight here 1, queued 0, "
        + "lease 3s, fails open}");
    assertThat(instance(3, false).toString()).endsWith(", fails closed}");
  }

  @Test
  void callsWaitingInTheLocalFallbackCountAsQueued() {
    ConcurrencyLimit limit = instance(1, true);
    store.down = true;
    for (int i = 0; i < 2; i++) {
      TestPublisher.<String>create().mono().transformDeferred(limitedBy(limit)).subscribe();
    }
    clock.advanceTimeBy(Duration.ofMillis(500));
    assertThat(limit.inFlight()).isEqualTo(1);
    assertThat(limit.queued()).as("the second waits in the local limit").isEqualTo(1);
  }

  @Test
  void aLeaseOfThirtyMillisecondsToADayIsAcceptedAndOutsideThatRefused() {
    assertThat(new SharedSettings(Duration.ofMillis(500), Duration.ofMillis(30), Duration.ofMillis(50), true).lease())
        .isEqualTo(Duration.ofMillis(30));
    assertThat(new SharedSettings(Duration.ofMillis(500), Duration.ofDays(1), Duration.ofMillis(50), true).lease())
        .isEqualTo(Duration.ofDays(1));
    assertThatThrownBy(() -> new SharedSettings(Duration.ofMillis(500), Duration.ofDays(2), Duration.ofMillis(50),
        true)).hasMessage("Shared limit lease is PT48H: give a positive duration of at most a day");
    assertThatThrownBy(() -> new SharedSettings(Duration.ofMillis(500), Duration.ofMillis(29), Duration.ofMillis(50),
        true)).hasMessageContaining("give at least 30 ms");
  }

  @Test
  void instancesSharingAStoreNeverHaveMoreThanTheLimitInFlight() {
    List<ConcurrencyLimit> instances = List.of(instance(5, true), instance(5, true), instance(5, true));
    AtomicInteger inFlight = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    AtomicInteger done = new AtomicInteger();
    Mono<String> call = Mono.defer(() -> {
      most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
      return Mono.delay(Duration.ofMillis(200), clock).thenReturn("ok").doOnTerminate(inFlight::decrementAndGet);
    });
    for (int i = 0; i < 60; i++) {
      call.transformDeferred(limitedBy(instances.get(i % 3))).subscribe(v -> done.incrementAndGet());
    }
    clock.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(done).hasValue(60);
    assertThat(most).as("at most 5 across the three instances, and 5 reached").hasValue(5);
    assertThat(store.held()).isZero();
    instances.forEach(l -> assertThat(l.inFlight()).isZero());
  }

  @Test
  void aRunningCallKeepsItsPermitPastItsLeaseAndADeadInstancesPermitsComeBackWhenTheirLeasesRunOut() {
    ConcurrencyLimit limit = instance(2, true);
    TestPublisher<String> longCall = TestPublisher.create();
    longCall.mono().transformDeferred(limitedBy(limit)).subscribe();
    // a crashed instance took the other permit and will never renew or release it
    String orphan = store.tryAcquire(Duration.ofSeconds(3)).block();
    assertThat(orphan).isNotNull();
    assertThat(store.held()).isEqualTo(2);

    clock.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(store.held()).as("the running call renewed its lease; the orphan's ran out").isEqualTo(1);
    List<String> answers = new ArrayList<>();
    Mono.just("next").transformDeferred(limitedBy(limit)).subscribe(answers::add);
    assertThat(answers).containsExactly("next");
    longCall.complete();
    assertThat(store.held()).isZero();
  }

  @Test
  void aWaitingCallGetsAPermitFreedByAnotherInstance() {
    ConcurrencyLimit a = instance(1, true);
    ConcurrencyLimit b = instance(1, true);
    TestPublisher<String> onA = TestPublisher.create();
    onA.mono().transformDeferred(limitedBy(a)).subscribe();
    List<String> answers = new ArrayList<>();
    Mono.just("b").transformDeferred(limitedBy(b)).subscribe(answers::add);
    clock.advanceTimeBy(Duration.ofSeconds(1));
    assertThat(answers).isEmpty();
    onA.complete();
    clock.advanceTimeBy(Duration.ofMillis(50));
    assertThat(answers).as("b asks again every pollInterval").containsExactly("b");
  }

  @Test
  void aCallCancelledWhileItsPermitIsOnItsWayGivesItBack() {
    ConcurrencyLimit limit = instance(1, true);
    store.answerDelay = Duration.ofMillis(100);
    TestPublisher<String> call = TestPublisher.create();
    Disposable caller = call.mono().transformDeferred(limitedBy(limit)).subscribe();
    clock.advanceTimeBy(Duration.ofMillis(50));
    caller.dispose();
    clock.advanceTimeBy(Duration.ofSeconds(1));
    call.assertWasNotSubscribed();
    assertThat(store.held()).isZero();
    assertThat(limit.inFlight()).isZero();
    assertThat(limit.queued()).isZero();
  }

  @Test
  void anInstanceAsksTheStoreForOnePermitAtATimeAndLosesNoneWhenAnswersComeLater() {
    AnsweringPermitStore later = new AnsweringPermitStore();
    ConcurrencyLimit limit = ConcurrencyEngine.shared(new ConcurrencySettings("search", 1, null,
        Duration.ofSeconds(30), 1000, FailureClassifier.defaults(), () -> clock),
        new SharedSettings(Duration.ofMillis(500), Duration.ofSeconds(3), Duration.ofMillis(50), true), later);
    List<TestPublisher<String>> calls = List.of(TestPublisher.create(), TestPublisher.create(),
        TestPublisher.create());
    List<String> answers = new ArrayList<>();
    calls.get(0).mono().transformDeferred(limitedBy(limit)).subscribe(answers::add);
    calls.get(1).mono().transformDeferred(limitedBy(limit)).subscribe(answers::add);
    later.grantOldest();   // the first call runs; the second call's request goes out
    calls.get(2).mono().transformDeferred(limitedBy(limit)).subscribe(answers::add);
    assertThat(later.mostAskingAtOnce).as("requests for a permit in flight at once").hasValue(1);

    calls.get(0).emit("first");   // its permit comes back; the second call's request is answered next
    later.grantOldest();
    calls.get(1).emit("second");
    later.grantOldest();
    calls.get(2).emit("third");
    assertThat(answers).containsExactly("first", "second", "third");
    assertThat(later.mostAskingAtOnce).hasValue(1);
    assertThat(later.held).as("permits left taken in the store").isEmpty();
    assertThat(limit.inFlight()).isZero();
    assertThat(limit.queued()).isZero();
  }

  @Test
  void anUnreachableStoreLetsCallsThroughALocalLimitOfTheSameSizeWhenFailingOpen() {
    ConcurrencyLimit limit = instance(2, true);
    store.down = true;
    List<TestPublisher<String>> calls = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      TestPublisher<String> call = TestPublisher.create();
      calls.add(call);
      call.mono().transformDeferred(limitedBy(limit)).subscribe();
    }
    clock.advanceTimeBy(Duration.ofMillis(500));
    calls.get(0).assertWasSubscribed();
    calls.get(1).assertWasSubscribed();
    calls.get(2).assertWasNotSubscribed();
    assertThat(limit.inFlight()).isEqualTo(2);
    calls.get(0).complete();
    calls.get(2).assertWasSubscribed();
    calls.get(1).complete();
    calls.get(2).complete();
    assertThat(limit.inFlight()).isZero();

    store.down = false;
    clock.advanceTimeBy(Duration.ofSeconds(1));
    Mono.just("back").transformDeferred(limitedBy(limit)).subscribe();
    assertThat(store.asked).as("a second later the store is asked again").isEqualTo(1);
  }

  @Test
  void anUnreachableStoreRefusesCallsWhenFailingClosed() {
    ConcurrencyLimit limit = instance(2, false);
    store.down = true;
    List<Throwable> errors = new ArrayList<>();
    Mono.just("x").transformDeferred(limitedBy(limit)).subscribe(v -> {}, errors::add);
    clock.advanceTimeBy(Duration.ofMillis(500));
    assertThat(errors).singleElement().satisfies(e -> {
      assertThat(((LimitExceededException) e).reason()).isEqualTo(Reason.STORE_UNAVAILABLE);
      assertThat(e).hasMessage("Limit 'search' refused the call: fake semaphore did not answer and the limit fails "
          + "closed");
    });
  }

  @Test
  void aStreamHoldsItsSharedPermitUntilItEnds() {
    ConcurrencyLimit limit = instance(1, true);
    TestPublisher<String> stream = TestPublisher.create();
    Disposable subscription = stream.flux().transformDeferred(limitedBy(limit)).subscribe();
    stream.next("a", "b");
    assertThat(store.held()).isEqualTo(1);
    subscription.dispose();
    assertThat(store.held()).isZero();
    assertThat(Flux.just(1, 2).transformDeferred(limitedBy(limit)).collectList().block()).containsExactly(1, 2);
  }
}
