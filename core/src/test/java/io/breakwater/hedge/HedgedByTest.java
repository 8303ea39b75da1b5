package io.breakwater.hedge;

import static io.breakwater.Breakwater.hedgedBy;
import static io.breakwater.Breakwater.withDeadline;
import static io.breakwater.hedge.ScriptedDependency.answer;
import static io.breakwater.hedge.ScriptedDependency.answering;
import static io.breakwater.hedge.ScriptedDependency.failure;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.testing.TaskCountingScheduler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.publisher.PublisherProbe;
import reactor.test.scheduler.VirtualTimeScheduler;

class HedgedByTest {

  static final Duration VERIFY = Duration.ofSeconds(5);
  static final Duration DELAY = Duration.ofMillis(100);

  final SimpleMeterRegistry meters = new SimpleMeterRegistry();

  /** A fixed 100 ms hedge whose budget allows a hedge per call (it still starts empty: see {@link #fill}). */
  HedgePolicy.Builder fixed() {
    return HedgePolicy.builder().name("search").delay(DELAY).budget(1.0).meterRegistry(meters);
  }

  /** Puts {@code calls} calls' worth of deposits in the policy's budget with calls that answer at once. */
  static void fill(HedgePolicy policy, int calls) {
    for (int i = 0; i < calls; i++) {
      Mono.just("warm").transformDeferred(hedgedBy(policy)).block();
    }
  }

  double counter(String name) {
    return meters.counter(name, "dependency", "search").count();
  }

  @Test
  void aCallThatAnswersBeforeTheDelayStartsNoHedgeAndLeavesNoTimer() {
    VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    TaskCountingScheduler timers = new TaskCountingScheduler(vts);
    HedgePolicy policy = fixed().scheduler(() -> timers).build();
    ScriptedDependency dependency = answering(Duration.ofMillis(60));
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)), () -> vts, 1)
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(60))
        .expectNext("a0")
        .then(() -> assertThat(timers.scheduledTasks()).as("the hedge timer was armed").isEqualTo(1))
        .thenAwait(Duration.ofMillis(40))
        .then(() -> assertThat(timers.pendingTasks()).as("and gone once the hedge delay has passed").isZero())
        .thenAwait(Duration.ofSeconds(1))
        .expectComplete()
        .verify(VERIFY);
    assertThat(dependency.calls).as("no hedge ever starts").hasValue(1);
    assertThat(counter("breakwater.hedge.started")).isZero();
  }

  @Test
  void aCallThatAnswersDuringItsSubscriptionArmsNoTimer() {
    VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    TaskCountingScheduler timers = new TaskCountingScheduler(vts);
    HedgePolicy policy = fixed().scheduler(() -> timers).build();
    StepVerifier.create(Mono.just("cached").transformDeferred(hedgedBy(policy)))
        .expectNext("cached")
        .expectComplete()
        .verify(VERIFY);
    assertThat(timers.scheduledTasks()).isZero();
  }

  @Test
  void aSlowCallIsHedgedAfterTheDelayAndTheFirstAnswerWinsAndTheLoserIsCancelled() {
    HedgePolicy policy = fixed().build();
    fill(policy, 1);
    ScriptedDependency dependency = answering(Duration.ofSeconds(10), Duration.ofMillis(100));
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(200))
        .expectNext("a1")
        .expectComplete()
        .verify(VERIFY);
    assertThat(dependency.startedAtMillis).containsExactly(0L, 100L);
    dependency.probe(0).assertWasCancelled();
    dependency.probe(1).assertWasNotCancelled();
    assertThat(counter("breakwater.hedge.started")).isEqualTo(1);
    assertThat(counter("breakwater.hedge.won")).isEqualTo(1);
    assertThat(counter("breakwater.hedge.cancelled")).isEqualTo(1);
  }

  @Test
  void aLoserWhoseCancelThrowsLetsTheWinnerAnswerAndWhatItThrewIsDropped() {
    HedgePolicy policy = fixed().build();
    fill(policy, 1);
    IllegalStateException thrown = new IllegalStateException("blocking drain refused");
    ScriptedDependency dependency = new ScriptedDependency(n -> n == 0
        ? Mono.from((Publisher<String>) s -> s.onSubscribe(new Subscription() {
          @Override
          public void request(long r) {
          }

          @Override
          public void cancel() {
            throw thrown;
          }
        }))
        : ScriptedDependency.answer("a" + n, Duration.ofMillis(100)));
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(200))
        .expectNext("a1")
        .expectComplete()
        .verifyThenAssertThat(VERIFY)
        .hasDroppedErrorsSatisfying(dropped -> assertThat(dropped).containsExactly(thrown));
  }

  @Test
  void thePrimaryStillWinsIfItAnswersBeforeTheHedgeAndThenTheHedgeIsCancelled() {
    HedgePolicy policy = fixed().build();
    fill(policy, 1);
    ScriptedDependency dependency = answering(Duration.ofMillis(150), Duration.ofSeconds(10));
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(150))
        .expectNext("a0")
        .expectComplete()
        .verify(VERIFY);
    assertThat(dependency.calls).hasValue(2);
    dependency.probe(1).assertWasCancelled();
    dependency.probe(0).assertWasNotCancelled();
    assertThat(counter("breakwater.hedge.won")).isZero();
    assertThat(counter("breakwater.hedge.cancelled")).isEqualTo(1);
  }

  @Test
  void upToMaxHedgesStartOneDelayApart() {
    HedgePolicy policy = fixed().maxHedges(3).build();
    fill(policy, 3);
    ScriptedDependency dependency = answering(Duration.ofSeconds(10), Duration.ofSeconds(10),
        Duration.ofSeconds(10), Duration.ofMillis(50));
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(350))
        .expectNext("a3")
        .expectComplete()
        .verify(VERIFY);
    assertThat(dependency.startedAtMillis).containsExactly(0L, 100L, 200L, 300L);
    for (int i = 0; i < 3; i++) {
      dependency.probe(i).assertWasCancelled();
    }
    assertThat(counter("breakwater.hedge.cancelled")).isEqualTo(3);
  }

  @Test
  void noMoreThanMaxHedgesStartHoweverLongTheCallTakes() {
    HedgePolicy policy = fixed().maxHedges(2).build();
    fill(policy, 10);
    ScriptedDependency dependency = answering(Duration.ofSeconds(10));
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)))
        .expectSubscription()
        .expectNoEvent(Duration.ofSeconds(10))
        .expectNext("a0")
        .expectComplete()
        .verify(VERIFY);
    assertThat(dependency.startedAtMillis).containsExactly(0L, 100L, 200L);
  }

  @Test
  void aFailedAttemptDoesNotEndTheCallWhileAnotherIsInFlight() {
    HedgePolicy policy = fixed().build();
    fill(policy, 1);
    ScriptedDependency dependency = new ScriptedDependency(n -> n == 0
        ? failure(new HttpStatusException(503), Duration.ofMillis(150))
        : answer("hedge", Duration.ofMillis(100)));
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(200))
        .expectNext("hedge")
        .expectComplete()
        .verify(VERIFY);
  }

  @Test
  void whenTheOnlyAttemptInFlightFailsTheCallFailsAtOnceAndNoHedgeStarts() {
    HedgePolicy policy = fixed().build();
    fill(policy, 1);
    ScriptedDependency dependency = new ScriptedDependency(n -> failure(new HttpStatusException(503),
        Duration.ofMillis(50)));
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(50))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(HttpStatusException.class))
        .verify(VERIFY);
    assertThat(dependency.calls).as("a hedge is not a retry").hasValue(1);
  }

  @Test
  void whenEveryAttemptFailsTheCallFailsWithTheLastError() {
    HedgePolicy policy = fixed().build();
    fill(policy, 1);
    IOException last = new IOException("connection reset");
    ScriptedDependency dependency = new ScriptedDependency(n -> n == 0
        ? failure(new HttpStatusException(503), Duration.ofMillis(150))
        : failure(last, Duration.ofMillis(100)));
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(200))
        .expectErrorSatisfies(e -> assertThat(e).isSameAs(last))
        .verify(VERIFY);
  }

  @Test
  void anEmptyAnswerWinsToo() {
    HedgePolicy policy = fixed().build();
    fill(policy, 1);
    AtomicInteger calls = new AtomicInteger();
    Supplier<Mono<String>> call = () -> Mono.defer(() -> calls.getAndIncrement() == 0
        ? Mono.<String>never()
        : Mono.delay(Duration.ofMillis(10)).then(Mono.<String>empty()));
    StepVerifier.withVirtualTime(() -> call.get().transformDeferred(hedgedBy(policy)))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(110))
        .expectComplete()
        .verify(VERIFY);
  }

  @Test
  void cancellingTheCallCancelsEveryAttemptAndTheTimer() {
    VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    TaskCountingScheduler timers = new TaskCountingScheduler(vts);
    HedgePolicy policy = fixed().maxHedges(2).scheduler(() -> timers).build();
    fill(policy, 2);
    ScriptedDependency dependency = answering(Duration.ofSeconds(10));
    AtomicReference<Subscription> call = new AtomicReference<>();
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)), () -> vts, 1)
        .consumeSubscriptionWith(call::set)
        .expectNoEvent(Duration.ofMillis(150))
        .then(() -> call.get().cancel())
        .then(() -> {
          assertThat(dependency.calls).hasValue(2);
          dependency.probe(0).assertWasCancelled();
          dependency.probe(1).assertWasCancelled();
        })
        .thenAwait(Duration.ofMillis(50))   // the second hedge's instant: its slot's task, kept, finds nothing due
        .then(() -> assertThat(timers.pendingTasks()).as("no timer task left").isZero())
        .thenCancel()
        .verify(VERIFY);
    assertThat(dependency.calls).as("the second hedge never starts").hasValue(2);
    assertThat(counter("breakwater.hedge.cancelled")).as("the caller's cancellation is not a lost race").isZero();
  }

  @Test
  void hedgesGoToTheAlternatesInTurn() {
    HedgePolicy policy = fixed().maxHedges(3).build();
    fill(policy, 3);
    PublisherProbe<String> eu = PublisherProbe.of(Mono.never());
    PublisherProbe<String> asia = PublisherProbe.of(
        Mono.defer(() -> Mono.delay(Duration.ofMillis(150)).thenReturn("asia")));
    AtomicInteger euCalls = new AtomicInteger();
    List<Supplier<Mono<String>>> alternates = List.of(
        () -> {
          euCalls.incrementAndGet();
          return eu.mono();
        },
        asia::mono);
    expectTheAlternateToAnswer(policy, alternates, Duration.ofMillis(350));
    assertThat(euCalls).as("hedges 1 and 3 went to the first alternate").hasValue(2);
    eu.assertWasCancelled();
    asia.assertWasSubscribed();
  }

  /** An alternate that notes in {@code called} that it was called, then answers as {@code answer} does. */
  static Supplier<Mono<String>> region(String name, List<String> called, Mono<String> answer) {
    return () -> Mono.defer(() -> {
      called.add(name);
      return answer;
    });
  }

  /** A call whose primary never answers gets "asia" from an alternate {@code after} its start. */
  static void expectTheAlternateToAnswer(HedgePolicy policy, List<Supplier<Mono<String>>> alternates,
      Duration after) {
    StepVerifier.withVirtualTime(() -> Mono.<String>never().transformDeferred(hedgedBy(policy, alternates)))
        .expectSubscription()
        .expectNoEvent(after)
        .expectNext("asia")
        .expectComplete()
        .verify(VERIFY);
  }

  @Test
  void anAlternateThatCannotBeCalledCountsAsAFailedAttempt() {
    HedgePolicy policy = fixed().build();
    fill(policy, 1);
    StepVerifier.withVirtualTime(() -> Mono.delay(Duration.ofMillis(300)).thenReturn("primary")
            .transformDeferred(hedgedBy(policy, List.<Supplier<Mono<String>>>of(() -> {
              throw new IllegalStateException("no such region");
            }))))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(300))
        .expectNext("primary")
        .expectComplete()
        .verify(VERIFY);
  }

  @Test
  void underADeadlineTheHedgesAreSpreadSoEachGetsAsLongAsTheGapBeforeIt() {
    HedgePolicy policy = fixed().delay(Duration.ofSeconds(5)).maxHedges(2).build();
    fill(policy, 2);
    ScriptedDependency dependency = answering(Duration.ofSeconds(10), Duration.ofSeconds(10),
        Duration.ofMillis(100));
    StepVerifier.withVirtualTime(() -> dependency.call()
            .transformDeferred(hedgedBy(policy))
            .transformDeferred(withDeadline(Duration.ofSeconds(3))))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(2100))
        .expectNext("a2")
        .expectComplete()
        .verify(VERIFY);
    assertThat(dependency.startedAtMillis).containsExactly(0L, 1000L, 2000L);
  }

  @Test
  void aPolicyNotBuiltByTheBuilderIsRefused() {
    HedgePolicy fake = (HedgePolicy) java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {HedgePolicy.class}, (proxy, method, args) -> null);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> hedgedBy(fake))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("HedgePolicy.builder()");
  }

  @Test
  void hedgeKGoesToTheAlternateAtKMinusOneModuloTheirNumber() {
    HedgePolicy policy = fixed().maxHedges(3).build();
    fill(policy, 3);
    List<String> called = new CopyOnWriteArrayList<>();
    List<Supplier<Mono<String>>> alternates = List.of(
        region("us", called, Mono.never()),
        region("eu", called, Mono.never()),
        region("asia", called,   // assembled when subscribed, so that its delay runs on the virtual clock
            Mono.defer(() -> Mono.delay(Duration.ofMillis(10)).thenReturn("asia"))));
    expectTheAlternateToAnswer(policy, alternates, Duration.ofMillis(310));
    assertThat(called).containsExactly("us", "eu", "asia");
  }

  @Test
  void underADeadlineWithLessTimeLeftThanOneNanosecondPerAttemptTheHedgeStartsAtOnce() {
    HedgePolicy policy = fixed().build();
    fill(policy, 1);
    ScriptedDependency dependency = answering(Duration.ofSeconds(10));
    Duration deadline = Duration.ofSeconds(1);
    StepVerifier.withVirtualTime(() -> Mono.delay(deadline.minusNanos(1))   // the call starts 1 ns before the deadline
            .then(dependency.call().transformDeferred(hedgedBy(policy)))
            .transformDeferred(withDeadline(deadline)))
        .expectSubscription()
        .thenAwait(deadline)
        .expectError(DeadlineExceededException.class)
        .verify(VERIFY);
    assertThat(dependency.calls).as("1 ns / (maxHedges + 1) is no delay: the hedge started with the call")
        .hasValue(2);
    assertThat(counter("breakwater.hedge.started")).isEqualTo(1);
  }

  @Test
  void aHedgeWhoseSubscriptionLetsThePrimaryAnswerIsCancelledAndCountedOnce() {
    HedgePolicy policy = fixed().build();
    fill(policy, 1);
    Sinks.One<String> primary = Sinks.one();
    PublisherProbe<String> hedge = PublisherProbe.of(Mono.defer(() -> {
      primary.tryEmitValue("primary");   // e.g. a shared connection that delivers the primary's answer first
      return Mono.never();
    }));
    StepVerifier.withVirtualTime(() -> primary.asMono().transformDeferred(hedgedBy(policy,
            List.<Supplier<Mono<String>>>of(hedge::mono))))
        .expectSubscription()
        .expectNoEvent(DELAY)
        .expectNext("primary")
        .expectComplete()
        .verify(VERIFY);
    hedge.assertWasCancelled();
    assertThat(counter("breakwater.hedge.started")).isEqualTo(1);
    assertThat(counter("breakwater.hedge.won")).isZero();
    assertThat(counter("breakwater.hedge.cancelled")).as("one attempt lost").isEqualTo(1);
  }

  @Test
  void aCallWhoseHedgeTheBudgetRefusedFailsAtOnceWhenItsPrimaryFails() {
    HedgePolicy policy = fixed().budget(0.1).build();   // the call's own deposit is a tenth of a token
    ScriptedDependency dependency = new ScriptedDependency(n -> failure(new HttpStatusException(503),
        Duration.ofMillis(150)));
    StepVerifier.withVirtualTime(() -> dependency.call().transformDeferred(hedgedBy(policy)))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(150))
        .expectError(HttpStatusException.class)
        .verify(VERIFY);
    assertThat(counter("breakwater.hedge.budget.refusals")).isEqualTo(1);
    assertThat(dependency.calls).hasValue(1);
  }

  @Test
  void aCallWhoseAlternateCannotBeCalledFailsAtOnceWhenItsPrimaryFails() {
    HedgePolicy policy = fixed().build();
    fill(policy, 1);
    HttpStatusException primaryFailure = new HttpStatusException(503);
    StepVerifier.withVirtualTime(() -> failure(primaryFailure, Duration.ofMillis(150))
            .transformDeferred(hedgedBy(policy, List.<Supplier<Mono<String>>>of(() -> {
              throw new IllegalStateException("no such region");
            }))))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(150))
        .expectErrorSatisfies(e -> assertThat(e).as("the last attempt's error").isSameAs(primaryFailure))
        .verify(VERIFY);
  }
}
