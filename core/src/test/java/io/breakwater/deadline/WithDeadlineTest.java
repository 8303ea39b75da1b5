package io.breakwater.deadline;

import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.testing.TaskCountingScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.publisher.PublisherProbe;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.context.Context;

class WithDeadlineTest {

  private static DeadlineSpec named(String name, Duration budget) {
    return DeadlineSpec.builder(budget).name(name).build();
  }

  @Test
  void expiresAtExactlyTheBudget() {
    StepVerifier.withVirtualTime(() -> Mono.never().transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(10).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectErrorSatisfies(e -> assertThat(e)
            .isInstanceOf(DeadlineExceededException.class)
            .isInstanceOf(TimeoutException.class)
            .hasMessage("Deadline 'deadline' exceeded: 10s of 10s used"))
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void errorNamesTheBudgetAndHowMuchWasUsed() {
    StepVerifier.withVirtualTime(() -> Mono.never().transformDeferred(withDeadline(named("plan-trip",
            Duration.ofMillis(1500)))))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(1500))
        .expectErrorSatisfies(e -> {
          DeadlineExceededException d = (DeadlineExceededException) e;
          assertThat(d.source()).isEqualTo("plan-trip");
          assertThat(d.budget()).isEqualTo(Duration.ofMillis(1500));
          assertThat(d.used()).isEqualTo(Duration.ofMillis(1500));
          assertThat(d.getMessage()).isEqualTo("Deadline 'plan-trip' exceeded: 1.5s of 1.5s used");
          assertThat(d.getStackTrace()).isEmpty();
        })
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void outerShorterDeadlineWinsOverInnerLongerOne() {
    StepVerifier.withVirtualTime(() -> Mono.never()
            .transformDeferred(withDeadline(named("inner", Duration.ofSeconds(10))))
            .transformDeferred(withDeadline(named("outer", Duration.ofSeconds(3)))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(3).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectErrorSatisfies(e -> assertThat(((DeadlineExceededException) e).source()).isEqualTo("outer"))
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void innerShorterDeadlineWinsOverOuterLongerOne() {
    StepVerifier.withVirtualTime(() -> Mono.never()
            .transformDeferred(withDeadline(named("inner", Duration.ofSeconds(3))))
            .transformDeferred(withDeadline(named("outer", Duration.ofSeconds(10)))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(3).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectErrorSatisfies(e -> assertThat(((DeadlineExceededException) e).source()).isEqualTo("inner"))
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void upstreamSeesOnlyTheTightestDeadline() {
    Mono<String> seen = Mono.deferContextual(ctx -> Mono.just(Deadline.from(ctx).orElseThrow().name()));
    StepVerifier.withVirtualTime(() -> seen
            .transformDeferred(withDeadline(named("inner", Duration.ofSeconds(10))))
            .transformDeferred(withDeadline(named("outer", Duration.ofSeconds(3)))))
        .expectNext("outer")
        .verifyComplete();
    StepVerifier.withVirtualTime(() -> seen
            .transformDeferred(withDeadline(named("inner", Duration.ofSeconds(3))))
            .transformDeferred(withDeadline(named("outer", Duration.ofSeconds(10)))))
        .expectNext("inner")
        .verifyComplete();
  }

  @Test
  void zeroBudgetFailsAtOnceWithoutSubscribingUpstream() {
    PublisherProbe<String> call = PublisherProbe.of(Mono.just("called"));
    StepVerifier.withVirtualTime(() -> call.mono().transformDeferred(withDeadline(Duration.ZERO)))
        .expectError(DeadlineExceededException.class)
        .verify(Duration.ofSeconds(5));
    call.assertWasNotSubscribed();
  }

  @Test
  void innerDeadlineUnderAnExpiredOuterDeadlineFailsWithoutSubscribingUpstream() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    Deadline outer = Deadline.start(DeadlineSpec.builder(Duration.ofSeconds(1)).name("task").build(), clock);
    clock.advanceTimeBy(Duration.ofSeconds(2));
    PublisherProbe<String> call = PublisherProbe.of(Mono.just("called"));

    StepVerifier.create(call.mono()
            .transformDeferred(withDeadline(DeadlineSpec.builder(Duration.ofSeconds(30)).scheduler(() -> clock)
                .build()))
            .contextWrite(ctx -> ctx.put(io.breakwater.internal.ContextKeys.DEADLINE, outer)))
        .expectErrorSatisfies(e -> assertThat(e)
            .hasMessage("Deadline 'task' exceeded: 2s of 1s used"))
        .verify(Duration.ofSeconds(5));
    call.assertWasNotSubscribed();
  }

  @Test
  void upstreamIsCancelledWhenTheDeadlinePasses() {
    PublisherProbe<Object> call = PublisherProbe.of(Mono.never());
    StepVerifier.withVirtualTime(() -> call.mono().transformDeferred(withDeadline(Duration.ofSeconds(1))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(1))
        .expectError(DeadlineExceededException.class)
        .verify(Duration.ofSeconds(5));
    call.assertWasSubscribed();
    call.assertWasCancelled();
  }

  @Test
  void fluxKeepsTheItemsItEmittedBeforeTheDeadline() {
    StepVerifier.withVirtualTime(() -> Flux.interval(Duration.ofSeconds(1))
            .take(10)
            .transformDeferred(withDeadline(Duration.ofMillis(3500))))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(3500))
        .expectNext(0L, 1L, 2L)
        .expectError(DeadlineExceededException.class)
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void fluxThatCompletesInTimeCompletesNormally() {
    StepVerifier.withVirtualTime(() -> Flux.interval(Duration.ofSeconds(1))
            .take(3)
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .thenAwait(Duration.ofSeconds(3))
        .expectNext(0L, 1L, 2L)
        .verifyComplete();
  }

  @Test
  void monoStaysMono() {
    Function<Publisher<Integer>, Publisher<Integer>> deadline = withDeadline(Duration.ofSeconds(1));
    assertThat(deadline.apply(Mono.just(1))).isInstanceOf(Mono.class);
    assertThat(deadline.apply(Flux.just(1, 2))).isInstanceOf(Flux.class);
  }

  @Test
  void eachSubscriptionGetsItsOwnDeadline() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    // transform, not transformDeferred: the operator is applied once, at assembly, and subscribed twice.
    Mono<Duration> remaining = Mono.deferContextual(ctx -> Mono.just(Deadline.from(ctx).orElseThrow().remaining()))
        .transform(withDeadline(DeadlineSpec.builder(Duration.ofSeconds(10)).scheduler(() -> clock).build()));

    assertThat(remaining.block()).isEqualTo(Duration.ofSeconds(10));
    clock.advanceTimeBy(Duration.ofSeconds(5));
    assertThat(remaining.block()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void synchronousSourceArmsNoTimer() {
    TaskCountingScheduler clock = new TaskCountingScheduler(VirtualTimeScheduler.create());
    DeadlineSpec spec = DeadlineSpec.builder(Duration.ofSeconds(10)).scheduler(() -> clock).build();

    StepVerifier.create(Mono.just(42).transformDeferred(withDeadline(spec))).expectNext(42).verifyComplete();

    assertThat(clock.scheduledTasks()).isZero();
  }

  @Test
  void synchronousPipelineArmsNoTimerEvenBelowARetry() {
    // A retry passes onSubscribe down before it subscribes to its source, so "after onSubscribe" is too early to
    // know whether the call already finished: the timer waits until the subscription of the source has returned.
    TaskCountingScheduler clock = new TaskCountingScheduler(VirtualTimeScheduler.create());
    DeadlineSpec spec = DeadlineSpec.builder(Duration.ofSeconds(10)).scheduler(() -> clock).build();

    StepVerifier.create(Mono.fromSupplier(() -> 42)
            .transformDeferred(io.breakwater.Breakwater.perCallTimeout())
            .transformDeferred(io.breakwater.Breakwater.guardedBy(
                io.breakwater.breaker.CircuitBreaker.builder("sync").scheduler(() -> clock).build()))
            .transformDeferred(io.breakwater.Breakwater.retryWithBudget(
                io.breakwater.retry.Backoff.fullJitter(Duration.ofMillis(100), Duration.ofSeconds(1))))
            .transformDeferred(withDeadline(spec)))
        .expectNext(42)
        .verifyComplete();

    assertThat(clock.scheduledTasks()).isZero();
  }

  @Test
  void completionAndCancellationLeaveNoTimerBehind() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    TaskCountingScheduler clock = new TaskCountingScheduler(virtual);
    DeadlineSpec spec = DeadlineSpec.builder(Duration.ofSeconds(10)).scheduler(() -> clock).build();

    StepVerifier.create(Mono.delay(Duration.ofSeconds(1), virtual).transformDeferred(withDeadline(spec)))
        .then(() -> virtual.advanceTimeBy(Duration.ofSeconds(1)))
        .expectNext(0L)
        .verifyComplete();
    assertThat(clock.scheduledTasks()).isEqualTo(1);
    // the slot of the call's timer keeps its task until its instant, for the calls that follow (TimerWheel)
    assertThat(clock.pendingTasks()).isEqualTo(1);
    virtual.advanceTimeBy(Duration.ofSeconds(9));
    assertThat(clock.pendingTasks()).isZero();

    Disposable call = Mono.never().transformDeferred(withDeadline(spec)).subscribe();
    assertThat(clock.pendingTasks()).isEqualTo(1);
    call.dispose();

    virtual.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void callsThatFinishInTimeAreUntouched() {
    StepVerifier.withVirtualTime(() -> Mono.delay(Duration.ofSeconds(9))
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(9))
        .expectNext(0L)
        .verifyComplete();
  }

  @Test
  void upstreamErrorsPassThrough() {
    StepVerifier.withVirtualTime(() -> Mono.error(new IllegalStateException("boom"))
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectErrorMessage("boom")
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void cancellingTheCallCancelsUpstream() {
    PublisherProbe<Object> call = PublisherProbe.of(Mono.never());
    StepVerifier.withVirtualTime(() -> call.mono().transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .thenCancel()
        .verify(Duration.ofSeconds(5));
    call.assertWasCancelled();
  }

  @Test
  void upstreamStillSeesWhatTheSubscriberBelowPutInTheContext() {
    StepVerifier.withVirtualTime(() -> Mono.deferContextual(ctx -> Mono.just(ctx.get("tenant") + " "
                + Deadline.from(ctx).orElseThrow().name()))
            .transformDeferred(withDeadline(named("plan-trip", Duration.ofSeconds(10))))
            .contextWrite(Context.of("tenant", "acme")))
        .expectNext("acme plan-trip")
        .verifyComplete();
  }

  @Test
  void itemsThatArriveAfterTheDeadlinePassedAreDiscardedNotDelivered() {
    // A source that ignores the cancellation and emits anyway: what comes after the deadline's error goes to
    // Reactor's discard hook (where a pooled buffer is released), for a Flux's items and a Mono's one.
    List<Object> discarded = new ArrayList<>();
    AtomicReference<Subscriber<? super Integer>> flux = new AtomicReference<>();
    StepVerifier.withVirtualTime(() -> Flux.<Integer>from(s -> capture(s, flux))
            .transformDeferred(withDeadline(Duration.ofSeconds(1)))
            .doOnDiscard(Integer.class, discarded::add))
        .expectSubscription()
        .then(() -> flux.get().onNext(1))
        .expectNext(1)
        .thenAwait(Duration.ofSeconds(1))
        .expectError(DeadlineExceededException.class)
        .verify(Duration.ofSeconds(5));
    flux.get().onNext(2);

    AtomicReference<Subscriber<? super Integer>> mono = new AtomicReference<>();
    StepVerifier.withVirtualTime(() -> Mono.<Integer>fromDirect(s -> capture(s, mono))
            .transformDeferred(withDeadline(Duration.ofSeconds(1)))
            .doOnDiscard(Integer.class, discarded::add))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(1))
        .expectError(DeadlineExceededException.class)
        .verify(Duration.ofSeconds(5));
    mono.get().onNext(3);

    assertThat(discarded).containsExactly(2, 3);
  }

  @Test
  void aSourceThatFailsWhenCancelledByTheDeadlineHasItsErrorDroppedAndTheDeadlinesErrorDelivered() {
    IllegalStateException late = new IllegalStateException("failed on cancel");
    StepVerifier.withVirtualTime(() -> Flux.<Integer>from(s -> s.onSubscribe(onCancel(() -> s.onError(late))))
            .transformDeferred(withDeadline(Duration.ofSeconds(1))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(1))
        .expectError(DeadlineExceededException.class)
        .verifyThenAssertThat(Duration.ofSeconds(5))
        .hasDroppedErrors(1)
        .hasDroppedErrorsSatisfying(errors -> assertThat(errors).containsExactly(late));
  }

  @Test
  void aSourceThatCompletesWhenCancelledByTheDeadlineStillEndsTheCallWithTheDeadlinesError() {
    StepVerifier.withVirtualTime(() -> Flux.<Integer>from(s -> s.onSubscribe(onCancel(s::onComplete)))
            .transformDeferred(withDeadline(Duration.ofSeconds(1))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(1))
        .expectError(DeadlineExceededException.class)
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void aMonoThatFailsAfterItsItemHasTheErrorPassedOnAsItCame() {
    // The item met the deadline; what upstream signals after it is passed on, not judged again.
    StepVerifier.withVirtualTime(() -> Mono.fromDirect(Flux.concat(Mono.just(7),
                Mono.error(new IllegalStateException("after the item"))))
            .transformDeferred(withDeadline(Duration.ofSeconds(1))))
        .expectNext(7)
        .expectErrorMessage("after the item")
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void aCallSubscribedAtTheVeryInstantItsDeadlinePassesIsNotMade() {
    // At its instant a deadline has no time left (remaining() is zero): a call that starts then, under a tighter
    // deadline of its own, fails with the deadline in force and is never subscribed.
    PublisherProbe<String> call = PublisherProbe.of(Mono.just("called"));
    StepVerifier.withVirtualTime(() -> Mono.delay(Duration.ofSeconds(10))
            .then(call.mono().transformDeferred(withDeadline(named("call", Duration.ofSeconds(5)))))
            .transformDeferred(withDeadline(named("task", Duration.ofSeconds(10)))))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(10).minusNanos(1))
        .thenAwait(Duration.ofNanos(1))
        .expectErrorSatisfies(e -> assertThat(((DeadlineExceededException) e).source()).isEqualTo("task"))
        .verify(Duration.ofSeconds(5));
    call.assertWasNotSubscribed();
  }

  @Test
  void aDeadlineNoTighterThanTheOneInForceAddsNoOperatorToTheChain() {
    // "nesting only tightens": an inner withDeadline (or per-call budget) that would end with the one in force
    // leaves it to that one, with no subscriber of its own; Reactor's scans (debug tooling) see one withDeadline.
    AtomicReference<Subscriber<? super Integer>> task = new AtomicReference<>();
    StepVerifier.withVirtualTime(() -> Flux.<Integer>from(s -> capture(s, task))
            .transformDeferred(withDeadline(named("same", Duration.ofSeconds(10))))
            .transformDeferred(withDeadline(named("task", Duration.ofSeconds(10)))))
        .expectSubscription()
        .then(() -> assertThat(deadlinesBelow(task.get())).containsExactly("withDeadline(task)"))
        .thenCancel()
        .verify(Duration.ofSeconds(5));

    AtomicReference<Subscriber<? super Integer>> call = new AtomicReference<>();
    StepVerifier.withVirtualTime(() -> Flux.<Integer>from(s -> capture(s, call))
            .transformDeferred(perCallTimeout(Duration.ofSeconds(20)))
            .transformDeferred(perCallTimeout(Duration.ofSeconds(5))))
        .expectSubscription()
        .then(() -> assertThat(deadlinesBelow(call.get())).containsExactly("withDeadline(per-call)"))
        .thenCancel()
        .verify(Duration.ofSeconds(5));
  }

  private static List<String> deadlinesBelow(Subscriber<?> subscriber) {
    List<String> names = new ArrayList<>();
    for (Scannable s = Scannable.from(subscriber); s.isScanAvailable(); s = Scannable.from(s.scan(Scannable.Attr.ACTUAL))) {
      String name = s.scan(Scannable.Attr.NAME);   // not name(): a subscriber without a name reports its parent's
      if (name != null && name.startsWith("withDeadline")) {
        names.add(name);
      }
    }
    return names;
  }

  @Test
  void aDeadlineWhoseSchedulerIsDisposedFailsTheCallWithARejectionAndCancelsUpstream() {
    Scheduler disposed = Schedulers.newSingle("disposed-deadline-clock");
    disposed.dispose();
    PublisherProbe<Object> call = PublisherProbe.of(Mono.never());
    StepVerifier.create(call.mono()
            .transformDeferred(withDeadline(DeadlineSpec.builder(Duration.ofSeconds(1)).scheduler(() -> disposed)
                .build())))
        .expectError(RejectedExecutionException.class)
        .verify(Duration.ofSeconds(5));
    call.assertWasCancelled();
  }

  @Test
  void aSourceWhoseCancelThrowsStillFailsTheCallAtItsDeadlineAndWhatItThrewIsDropped() {
    // an SDK that drains the response body on the cancelling thread: under BlockHound its read throws from cancel()
    IllegalStateException thrown = new IllegalStateException("blocking drain refused");
    Publisher<String> cancelThrows = s -> s.onSubscribe(onCancel(() -> {
      throw thrown;
    }));
    StepVerifier.withVirtualTime(() -> Mono.from(cancelThrows).transformDeferred(withDeadline(Duration.ofSeconds(2))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(2))
        .expectError(DeadlineExceededException.class)
        .verifyThenAssertThat()
        .hasDroppedErrorsSatisfying(dropped -> assertThat(dropped).containsExactly(thrown));
  }

  @Test
  void anAttemptWhoseCancelThrowsStillFailsAtItsPerCallBudgetSoThatTheRetryAnswers() {
    IllegalStateException thrown = new IllegalStateException("blocking drain refused");
    int[] attempts = {0};
    Mono<String> call = Mono.defer(() -> ++attempts[0] == 1
        ? Mono.from((Publisher<String>) s -> s.onSubscribe(onCancel(() -> {
          throw thrown;
        })))
        : Mono.just("second attempt"));
    StepVerifier.withVirtualTime(() -> call
            .transformDeferred(perCallTimeout())
            .retry(1)
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(6))   // the per-call budget: min(10 s x 0.6, 12 s)
        .expectNext("second attempt")
        .expectComplete()
        .verifyThenAssertThat()
        .hasDroppedErrorsSatisfying(dropped -> assertThat(dropped).containsExactly(thrown));
  }

  /** A subscription that ignores requests and runs {@code action} when cancelled (a source that ends anyway). */
  private static Subscription onCancel(Runnable action) {
    return new Subscription() {
      @Override
      public void request(long n) {
      }

      @Override
      public void cancel() {
        action.run();
      }
    };
  }

  private static <T> void capture(Subscriber<? super T> s, AtomicReference<Subscriber<? super T>> into) {
    into.set(s);
    s.onSubscribe(Operators.emptySubscription());
  }
}
