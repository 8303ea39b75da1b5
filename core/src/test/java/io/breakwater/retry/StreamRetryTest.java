package io.breakwater.retry;

import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.withDeadline;
import static io.breakwater.retry.RetryWithBudgetTest.VERIFY;
import static io.breakwater.retry.RetryWithBudgetTest.fixedPolicy;
import static io.breakwater.retry.RetryWithBudgetTest.status;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

class StreamRetryTest {

  record Event(long seq, String id) {}

  @Test
  void streamIsRetriedWhileItHasEmittedNothing() {
    AtomicInteger subscriptions = new AtomicInteger();
    Flux<Integer> stream = Flux.defer(() -> subscriptions.getAndIncrement() < 2
        ? Flux.error(status(503)) : Flux.just(1, 2, 3));
    StepVerifier.withVirtualTime(() -> stream.transformDeferred(retryWithBudget(fixedPolicy().build())))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(200))
        .expectNext(1, 2, 3)
        .verifyComplete();
    assertThat(subscriptions).hasValue(3);
  }

  @Test
  void streamThatEmittedIsNotSubscribedAgain() {
    AtomicInteger subscriptions = new AtomicInteger();
    Flux<Integer> stream = Flux.defer(() -> {
      subscriptions.incrementAndGet();
      return Flux.just(1, 2).concatWith(Flux.error(status(503)));
    });
    StepVerifier.withVirtualTime(() -> stream.transformDeferred(retryWithBudget(fixedPolicy().build())))
        .expectNext(1, 2)
        .expectErrorSatisfies(e -> assertThat(((RetryExhaustedException) e).reason())
            .isEqualTo(RetryStopReason.ALREADY_EMITTED))
        .verify(VERIFY);
    assertThat(subscriptions).hasValue(1);
  }

  @Test
  void streamThatEmittedAfterARetryIsNotSubscribedAgain() {
    AtomicInteger subscriptions = new AtomicInteger();
    Flux<Integer> stream = Flux.defer(() -> subscriptions.getAndIncrement() == 0
        ? Flux.error(status(503)) : Flux.just(1).concatWith(Flux.error(status(503))));
    StepVerifier.withVirtualTime(() -> stream.transformDeferred(retryWithBudget(fixedPolicy().build())))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(100))
        .expectNext(1)
        .expectErrorSatisfies(e -> assertThat(((RetryExhaustedException) e).attempts()).hasSize(2))
        .verify(VERIFY);
    assertThat(subscriptions).hasValue(2);
  }

  @Test
  void resumeBySequenceContinuesAfterTheLastDeliveredAndDropsDuplicates() {
    List<Object> positions = new CopyOnWriteArrayList<>();
    AtomicInteger subscriptions = new AtomicInteger();
    // The server resumes one item too early (at the last delivered one) on the retry: it must be dropped.
    Flux<Event> stream = Flux.deferContextual(ctx -> {
      positions.add(StreamResume.lastDelivered(ctx).orElse("none"));
      if (subscriptions.getAndIncrement() == 0) {
        return Flux.just(new Event(1, "a"), new Event(2, "b")).concatWith(Flux.error(status(502)));
      }
      return Flux.just(new Event(2, "b"), new Event(3, "c"));
    });
    StepVerifier.withVirtualTime(() -> stream.transformDeferred(
            retryWithBudget(fixedPolicy().build(), StreamResume.bySequence(Event::seq))))
        .expectNext(new Event(1, "a"), new Event(2, "b"))
        .thenAwait(Duration.ofMillis(100))
        .expectNext(new Event(3, "c"))
        .verifyComplete();
    assertThat(positions).containsExactly("none", 2L);
  }

  @Test
  void resumeByIdDropsItemsAlreadyDelivered() {
    List<Object> positions = new CopyOnWriteArrayList<>();
    AtomicInteger subscriptions = new AtomicInteger();
    Flux<Event> stream = Flux.deferContextual(ctx -> {
      positions.add(StreamResume.lastDelivered(ctx).orElse("none"));
      if (subscriptions.getAndIncrement() == 0) {
        return Flux.just(new Event(0, "a"), new Event(0, "b")).concatWith(Flux.error(status(503)));
      }
      return Flux.just(new Event(0, "a"), new Event(0, "b"), new Event(0, "c"));   // a server that restarts
    });
    StepVerifier.withVirtualTime(() -> stream.transformDeferred(
            retryWithBudget(fixedPolicy().build(), StreamResume.byId(Event::id))))
        .expectNextCount(2)
        .thenAwait(Duration.ofMillis(100))
        .expectNext(new Event(0, "c"))
        .verifyComplete();
    assertThat(positions).containsExactly("none", "b");
  }

  @Test
  void streamRetriesHonourBackpressure() {
    AtomicInteger subscriptions = new AtomicInteger();
    Flux<Integer> stream = Flux.defer(() -> subscriptions.getAndIncrement() == 0
        ? Flux.error(status(503)) : Flux.range(1, 10));
    StepVerifier.withVirtualTime(() -> stream.transformDeferred(retryWithBudget(fixedPolicy().build())), 2)
        .expectSubscription()
        .thenAwait(Duration.ofMillis(100))
        .expectNext(1, 2)
        .expectNoEvent(Duration.ofSeconds(1))
        .thenRequest(8)
        .expectNextCount(8)
        .verifyComplete();
  }

  @Test
  void streamRetryStopsBeforeTheDeadline() {
    StepVerifier.withVirtualTime(() -> Flux.error(status(503))
            .transformDeferred(retryWithBudget(fixedPolicy().backoff(Backoff.fixed(Duration.ofSeconds(3))).build()))
            .transformDeferred(withDeadline(Duration.ofSeconds(2))))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(io.breakwater.deadline.DeadlineExceededException.class)
            .hasMessageContaining("gave up after 1 attempt"))
        .verify(VERIFY);
  }

  @Test
  void nestedStreamRetriesDoNotMultiply() {
    AtomicInteger subscriptions = new AtomicInteger();
    Flux<Integer> bottom = Flux.defer(() -> {
      subscriptions.incrementAndGet();
      return Flux.error(status(503));
    });
    RetryPolicy layer = fixedPolicy().build();
    StepVerifier.withVirtualTime(() -> bottom.transformDeferred(retryWithBudget(layer))
            .transformDeferred(retryWithBudget(layer))
            .transformDeferred(retryWithBudget(layer)))
        .expectSubscription()
        .thenAwait(Duration.ofMinutes(1))
        .expectError(RetryExhaustedException.class)
        .verify(VERIFY);
    assertThat(subscriptions).hasValue(4);
  }
}
