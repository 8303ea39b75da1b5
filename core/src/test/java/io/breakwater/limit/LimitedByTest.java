package io.breakwater.limit;

import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.internal.ContextKeys;
import io.breakwater.limit.LimitExceededException.Reason;
import io.breakwater.retry.RetryPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.publisher.TestPublisher;
import reactor.test.scheduler.VirtualTimeScheduler;

class LimitedByTest {

  /** A call that counts how many run at once and takes {@code latency} of virtual time. */
  static final class Dependency {
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();
    final AtomicInteger subscribed = new AtomicInteger();

    Mono<String> call(Duration latency) {
      return Mono.defer(() -> {
        subscribed.incrementAndGet();
        maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        // counted down before the answer travels on, as a server would: the permit goes back when it arrives
        return Mono.delay(latency).thenReturn("ok")
            .doOnTerminate(inFlight::decrementAndGet)
            .doOnCancel(inFlight::decrementAndGet);
      });
    }
  }

  @Test
  void oneHundredCallersAgainstFixedTenNeverHaveMoreThanTenInFlight() {
    Dependency dependency = new Dependency();
    SplittableRandom random = new SplittableRandom(7);
    List<Duration> latencies = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      latencies.add(Duration.ofMillis(100 + random.nextInt(400)));
    }
    ConcurrencyLimit limit = ConcurrencyLimit.builder("search").fixed(10).maxWait(Duration.ofMinutes(1)).build();

    StepVerifier.withVirtualTime(() -> Flux.fromIterable(latencies)
            .flatMap(latency -> dependency.call(latency).transformDeferred(limitedBy(limit)), 100))
        .thenAwait(Duration.ofMinutes(1))
        .expectNextCount(100)
        .verifyComplete();

    assertThat(dependency.maxInFlight).as("at most the limit in flight, and the limit reached").hasValue(10);
    assertThat(limit.inFlight()).isZero();
    assertThat(limit.queued()).isZero();
  }

  @Test
  void cancellationUnderRacesReturnsEveryPermit() throws InterruptedException {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("racy").fixed(10).maxWait(Duration.ofMinutes(1)).build();
    for (int round = 0; round < 200; round++) {
      List<Sinks.One<String>> answers = new ArrayList<>();
      List<reactor.core.Disposable> callers = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        Sinks.One<String> answer = Sinks.one();
        answers.add(answer);
        callers.add(answer.asMono().transformDeferred(limitedBy(limit)).subscribe(v -> {}, e -> {}));
      }
      assertThat(limit.inFlight()).isEqualTo(10);
      assertThat(limit.queued()).isEqualTo(90);
      // one thread cancels every caller while another answers every call: each permit goes back exactly once
      Thread canceller = new Thread(() -> callers.forEach(reactor.core.Disposable::dispose));
      Thread answerer = new Thread(() -> answers.forEach(a -> a.tryEmitValue("ok")));
      canceller.start();
      answerer.start();
      canceller.join();
      answerer.join();
      callers.forEach(reactor.core.Disposable::dispose);
      assertThat(limit.inFlight()).as("round %d", round).isZero();
      assertThat(limit.queued()).as("round %d", round).isZero();
    }
    // and all ten permits are there for new calls
    List<Sinks.One<String>> held = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      Sinks.One<String> s = Sinks.one();
      held.add(s);
      s.asMono().transformDeferred(limitedBy(limit)).subscribe();
    }
    assertThat(limit.inFlight()).isEqualTo(10);
    assertThat(limit.queued()).isZero();
    held.forEach(s -> s.tryEmitValue("ok"));
    assertThat(limit.inFlight()).isZero();
  }

  @Test
  void waitingCallsRunInArrivalOrder() {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("fifo").fixed(1).build();
    List<Integer> order = new ArrayList<>();
    StepVerifier.withVirtualTime(() -> Flux.range(0, 5)
            .flatMap(i -> Mono.delay(Duration.ofSeconds(1)).doOnSubscribe(s -> order.add(i)).thenReturn(i)
                .transformDeferred(limitedBy(limit))))
        .thenAwait(Duration.ofSeconds(5))
        .expectNext(0, 1, 2, 3, 4)
        .verifyComplete();
    assertThat(order).containsExactly(0, 1, 2, 3, 4);
  }

  @Test
  void aCallWaitsAtMostMaxWaitThenIsRefused() {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("slow").fixed(1).maxWait(Duration.ofSeconds(2)).build();
    Dependency dependency = new Dependency();
    StepVerifier.withVirtualTime(() -> Flux.merge(
            dependency.call(Duration.ofSeconds(10)).transformDeferred(limitedBy(limit)),
            dependency.call(Duration.ofSeconds(1)).transformDeferred(limitedBy(limit))))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(1999))
        .thenAwait(Duration.ofMillis(1))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(LimitExceededException.class)
              .hasMessageContaining("Limit 'slow' refused the call: no permit of 1 came free within 2s");
          LimitExceededException refusal = (LimitExceededException) e;
          assertThat(refusal.reason()).isEqualTo(Reason.WAITED_TOO_LONG);
          assertThat(refusal.failureKind()).isEqualTo(FailureKind.LIMIT_EXCEEDED);
          assertThat(refusal.source()).isEqualTo("slow");
          assertThat(refusal.retryAfter()).as("a concurrency limit cannot tell when a call ends").isEmpty();
          assertThat(refusal.getStackTrace()).isEmpty();
        })
        .verify(Duration.ofSeconds(10));
    assertThat(dependency.subscribed).as("the refused call was never made").hasValue(1);
    assertThat(limit.queued()).isZero();
    assertThat(limit.inFlight()).as("the running call was cancelled by the merge and gave its permit").isZero();
  }

  /** Issue 35: a wait the deadline ends is the deadline's TimeoutException, with the limit's refusal in it. */
  @Test
  void theDeadlineInForceBoundsTheWaitAndEndsItWithATimeoutException() {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("bounded").fixed(1).maxWait(Duration.ofMinutes(1)).build();
    Dependency dependency = new Dependency();
    TestPublisher<String> holder = TestPublisher.create();
    holder.mono().transformDeferred(limitedBy(limit)).subscribe();
    StepVerifier.withVirtualTime(() -> dependency.call(Duration.ofSeconds(1))
            .transformDeferred(limitedBy(limit))
            .transformDeferred(withDeadline(Duration.ofSeconds(3))))
        .thenAwait(Duration.ofSeconds(3))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(io.breakwater.deadline.DeadlineExceededException.class)
              .isInstanceOf(java.util.concurrent.TimeoutException.class)
              .hasMessageContaining("waited in a limit's queue");
          assertThat(e.getSuppressed()).singleElement().isInstanceOf(LimitExceededException.class)
              .satisfies(refusal -> assertThat(refusal).hasMessageContaining("within 3s"));
        })
        .verify(Duration.ofSeconds(10));
    assertThat(dependency.subscribed).hasValue(0);
    holder.complete();
    assertThat(limit.inFlight()).isZero();
  }

  @Test
  void aPassedDeadlineOrAZeroMaxWaitRefusesAtOnceWithoutCallingUpstream() {
    ConcurrencyLimit noWait = ConcurrencyLimit.builder("shed").fixed(1).maxWait(Duration.ZERO).build();
    TestPublisher<String> holder = TestPublisher.create();
    holder.mono().transformDeferred(limitedBy(noWait)).subscribe();
    Dependency dependency = new Dependency();

    StepVerifier.create(dependency.call(Duration.ofSeconds(1)).transformDeferred(limitedBy(noWait)))
        .expectErrorSatisfies(e -> {
          assertThat(((LimitExceededException) e).reason()).isEqualTo(Reason.WOULD_WAIT_TOO_LONG);
          assertThat(e).hasMessage("Limit 'shed' refused the call: all 1 permits are taken and it does not queue "
              + "calls");
        })
        .verify(Duration.ofSeconds(10));
    assertThat(dependency.subscribed).hasValue(0);
    holder.complete();
  }

  @Test
  void aLimitThatDoesNotQueueRunsCallsWhilePermitsAreFreeAndSaysWhyItRefusesTheRest() {
    for (ConcurrencyLimit limit : List.of(ConcurrencyLimit.builder("shed").fixed(1).maxQueue(0).build(),
        ConcurrencyLimit.builder("shed").fixed(1).maxWait(Duration.ZERO).build())) {
      List<Throwable> errors = new ArrayList<>();
      TestPublisher<String> holder = TestPublisher.create();
      holder.mono().transformDeferred(limitedBy(limit)).subscribe(v -> {}, errors::add);
      holder.assertWasSubscribed();
      Mono.just("x").transformDeferred(limitedBy(limit)).subscribe(v -> {}, errors::add);
      assertThat(errors).singleElement().satisfies(e -> assertThat(e)
          .hasMessage("Limit 'shed' refused the call: all 1 permits are taken and it does not queue calls"));
      holder.complete();
    }
  }

  @Test
  void aCallWhoseDeadlineHasPassedIsRefusedAtOnceSayingSo() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    try {
      ConcurrencyLimit limit = ConcurrencyLimit.builder("search").fixed(1).scheduler(() -> clock).build();
      TestPublisher<String> holder = TestPublisher.create();
      holder.mono().transformDeferred(limitedBy(limit)).subscribe();
      Deadline passed = Deadline.start(DeadlineSpec.builder(Duration.ofSeconds(1)).scheduler(() -> clock).build(),
          clock);
      clock.advanceTimeBy(Duration.ofSeconds(1));   // exactly at the deadline: no time left
      StepVerifier.create(Mono.just("x").transformDeferred(limitedBy(limit))
              .contextWrite(ctx -> ctx.put(ContextKeys.DEADLINE, passed)))
          .expectErrorMessage("Limit 'search' refused the call: all 1 permits are taken and the deadline in force "
              + "has passed")
          .verify(Duration.ofSeconds(10));
      assertThat(limit.queued()).isZero();
    } finally {
      clock.dispose();
    }
  }

  @Test
  void itsTextSaysItsKindLimitWhatIsInFlightAndWhatWaits() {
    ConcurrencyLimit fixed = ConcurrencyLimit.builder("search").fixed(1).maxQueue(5).build();
    TestPublisher<String> holder = TestPublisher.create();
    holder.mono().transformDeferred(limitedBy(fixed)).subscribe();
    Mono.just("x").transformDeferred(limitedBy(fixed)).subscribe(v -> {}, e -> {});
    assertThat(fixed).hasToString("ConcurrencyLimit{search, fixed 1, in flight 1, queued 1, maxWait 10s, "
        + "maxQueue 5}");
    assertThat(ConcurrencyLimit.builder("gpu").adaptive(10, 2, 100).maxWait(Duration.ZERO).build())
        .hasToString("ConcurrencyLimit{gpu, adaptive 10, in flight 0, queued 0, maxWait 0ns, maxQueue 1000}");
    holder.complete();
  }

  @Test
  void aFailingCallsErrorReachesItsCallerAndItsPermitComesBack() {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("search").fixed(1).build();
    StepVerifier.create(Mono.error(new IllegalStateException("down")).transformDeferred(limitedBy(limit)))
        .verifyErrorMessage("down");
    assertThat(limit.inFlight()).isZero();
  }

  @Test
  void anAdaptiveLimitsBoundsMayAllBeOne() {
    ConcurrencyLimit one = ConcurrencyLimit.builder("gpu").adaptive(1, 1, 1).build();
    assertThat(one.limit()).isEqualTo(1);
    assertThat(ConcurrencyLimit.builder("gpu").adaptive(5, 1, 5).build().limit()).isEqualTo(5);
  }

  @Test
  void aLimitsNameIsAShortTagWithoutBraces() {
    String longest = "s".repeat(200);
    assertThat(ConcurrencyLimit.builder(longest).fixed(1).build().name()).isEqualTo(longest);
    assertThatThrownBy(() -> ConcurrencyLimit.builder(longest + "s").fixed(1).build())
        .hasMessageStartingWith("Concurrency limit name '" + longest + "…' is blank, longer than 200 characters");
    assertThatThrownBy(() -> ConcurrencyLimit.builder("{search").fixed(1).build())
        .hasMessageContaining("contains a brace");
  }

  @Test
  void aFullQueueRefusesAtOnce() {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("small").fixed(1).maxQueue(2).build();
    List<TestPublisher<String>> calls = new ArrayList<>();
    List<Throwable> errors = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      TestPublisher<String> call = TestPublisher.create();
      calls.add(call);
      call.mono().transformDeferred(limitedBy(limit)).subscribe(v -> {}, errors::add);
    }
    assertThat(limit.inFlight()).isEqualTo(1);
    assertThat(limit.queued()).isEqualTo(2);
    assertThat(errors).singleElement().satisfies(e -> {
      assertThat(((LimitExceededException) e).reason()).isEqualTo(Reason.QUEUE_FULL);
      assertThat(e).hasMessageContaining("2 calls already wait");
    });
    calls.get(3).assertWasNotSubscribed();
    calls.get(0).complete();
    calls.get(1).assertWasSubscribed();
    calls.get(2).assertWasNotSubscribed();
  }

  @Test
  void aCancelledWaiterLeavesTheQueueAndTheNextOneRuns() {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("queue").fixed(1).build();
    TestPublisher<String> first = TestPublisher.create();
    TestPublisher<String> second = TestPublisher.create();
    TestPublisher<String> third = TestPublisher.create();
    first.mono().transformDeferred(limitedBy(limit)).subscribe();
    reactor.core.Disposable waiting = second.mono().transformDeferred(limitedBy(limit)).subscribe();
    third.mono().transformDeferred(limitedBy(limit)).subscribe();
    assertThat(limit.queued()).isEqualTo(2);

    waiting.dispose();
    assertThat(limit.queued()).isEqualTo(1);
    first.complete();
    second.assertWasNotSubscribed();
    third.assertWasSubscribed();
    assertThat(limit.inFlight()).isEqualTo(1);
    third.complete();
    assertThat(limit.inFlight()).isZero();
  }

  @Test
  void aStreamHoldsItsPermitUntilItTerminatesOrIsCancelled() {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("streams").fixed(2).build();
    TestPublisher<String> stream = TestPublisher.create();
    List<String> seen = new ArrayList<>();
    reactor.core.Disposable subscription = stream.flux().transformDeferred(limitedBy(limit)).subscribe(seen::add);
    stream.next("a", "b");
    assertThat(seen).containsExactly("a", "b");
    assertThat(limit.inFlight()).as("items do not give the permit back").isEqualTo(1);
    subscription.dispose();
    assertThat(limit.inFlight()).isZero();
    stream.assertCancelled();

    TestPublisher<String> failing = TestPublisher.create();
    failing.flux().transformDeferred(limitedBy(limit)).subscribe(v -> {}, e -> {});
    assertThat(limit.inFlight()).isEqualTo(1);
    failing.error(new IllegalStateException("boom"));
    assertThat(limit.inFlight()).isZero();
  }

  @Test
  void aMonoGivesItsPermitBackWithItsValueSoTheCallItsValueStartsFindsItFree() {
    // Mono.subscribe(value, error, complete) takes the value as the end of the call and runs what follows it then,
    // before the source's onComplete: the next call of such a chain must find the permit free, not be refused
    for (ConcurrencyLimit limit : List.of(ConcurrencyLimit.builder("chain").fixed(1).maxQueue(0).build(),
        ConcurrencyLimit.builder("chain").adaptive(1, 1, 1).maxQueue(0).build())) {
      TestPublisher<String> first = TestPublisher.create();
      List<Object> seen = new ArrayList<>();
      first.mono().transformDeferred(limitedBy(limit)).subscribe(v -> {
        seen.add(v);
        Mono.just("second").transformDeferred(limitedBy(limit)).subscribe(seen::add, seen::add);
      });
      first.next("first");
      assertThat(seen).as(limit.toString()).containsExactly("first", "second");
      assertThat(limit.inFlight()).isZero();
      first.complete();
      assertThat(limit.inFlight()).as("the end after the value gives nothing back twice").isZero();
    }
  }

  @Test
  void aMonoStaysAMono() {
    assertThat(Mono.just(1).transformDeferred(limitedBy(ConcurrencyLimit.fixed(1)))).isInstanceOf(Mono.class);
    StepVerifier.create(Flux.range(0, 3).transformDeferred(limitedBy(ConcurrencyLimit.fixed(1))))
        .expectNext(0, 1, 2)
        .verifyComplete();
  }

  @Test
  void aRefusalIsNotRetried() {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("busy").fixed(1).maxWait(Duration.ZERO).build();
    TestPublisher<String> holder = TestPublisher.create();
    holder.mono().transformDeferred(limitedBy(limit)).subscribe();
    AtomicInteger attempts = new AtomicInteger();
    StepVerifier.withVirtualTime(() -> Mono.fromCallable(attempts::incrementAndGet)
            .transformDeferred(limitedBy(limit))
            .transformDeferred(retryWithBudget(RetryPolicy.builder().name("busy").build())))
        .expectError(LimitExceededException.class)
        .verify(Duration.ofSeconds(5));
    assertThat(attempts).hasValue(0);
    assertThat(FailureClassifier.defaults().classify(new LimitExceededException("x", Reason.QUEUE_FULL, null, "x")))
        .isEqualTo(FailureKind.LIMIT_EXCEEDED);
    holder.complete();
  }

  @Test
  void theVirtualClockDrivesTheWaits() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    ConcurrencyLimit limit = ConcurrencyLimit.builder("clocked").fixed(1).maxWait(Duration.ofSeconds(1))
        .scheduler(() -> clock).build();
    TestPublisher<String> holder = TestPublisher.create();
    holder.mono().transformDeferred(limitedBy(limit)).subscribe();
    List<Throwable> errors = new ArrayList<>();
    Mono.just("x").transformDeferred(limitedBy(limit)).subscribe(v -> {}, errors::add);
    clock.advanceTimeBy(Duration.ofMillis(999));
    assertThat(errors).isEmpty();
    clock.advanceTimeBy(Duration.ofMillis(1));
    assertThat(errors).singleElement().isInstanceOf(LimitExceededException.class);
    holder.complete();
  }

  @Test
  void badSettingsSayWhatToChange() {
    assertThatThrownBy(() -> ConcurrencyLimit.fixed(0)).hasMessage("Concurrency limit 'concurrency' is fixed(0): "
        + "give 1 or more calls in flight");
    assertThatThrownBy(() -> ConcurrencyLimit.builder("x").build()).hasMessage("Concurrency limit 'x' has no limit: "
        + "add .fixed(10) or .adaptive()");
    assertThatThrownBy(() -> ConcurrencyLimit.builder("x").fixed(1).maxWait(Duration.ofSeconds(-1)).build())
        .hasMessageContaining("maxWait is PT-1S: give zero (refuse at once) or a positive duration");
    assertThatThrownBy(() -> ConcurrencyLimit.builder("x").fixed(1).maxQueue(-1).build())
        .hasMessageContaining("maxQueue is -1");
    assertThatThrownBy(() -> ConcurrencyLimit.builder("a{b}").fixed(1).build())
        .hasMessageContaining("contains a brace");
    assertThatThrownBy(() -> ConcurrencyLimit.builder("x").adaptive(5, 10, 20).build())
        .hasMessage("Adaptive limit initial is 5: give a value from min 10 to max 20");
    assertThatThrownBy(() -> ConcurrencyLimit.builder("x").adaptive(5, 0, 20).build())
        .hasMessage("Adaptive limit min is 0: give 1 or more");
    assertThatThrownBy(() -> ConcurrencyLimit.builder("x").adaptive(5, 6, 2).build())
        .hasMessage("Adaptive limit max is 2, below its min 6: give a max of at least 6");
    ConcurrencyLimit huge = ConcurrencyLimit.builder("x").fixed(Integer.MAX_VALUE)
        .maxWait(Duration.ofSeconds(Long.MAX_VALUE)).build();
    StepVerifier.create(Mono.just(1).transformDeferred(limitedBy(huge))).expectNext(1).verifyComplete();
  }
}
