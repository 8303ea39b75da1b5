package io.breakwater.hedge;

import static io.breakwater.Breakwater.hedgedBy;
import static io.breakwater.hedge.HedgedByTest.VERIFY;
import static io.breakwater.hedge.HedgedByTest.fill;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.publisher.PublisherProbe;

/**
 * First-token hedging of streams. Items are strings: {@code "meta…"} is framing and {@code "ping"} a heartbeat,
 * neither of which is content; anything else is a token.
 */
class FirstTokenHedgingTest {

  static final Predicate<String> IS_CONTENT = s -> !s.startsWith("meta") && !s.equals("ping");
  static final Duration DELAY = Duration.ofMillis(300);

  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final AtomicInteger streams = new AtomicInteger();
  final List<PublisherProbe<String>> probes = new CopyOnWriteArrayList<>();
  final List<Long> openedAtMillis = new CopyOnWriteArrayList<>();

  HedgePolicy policy() {
    HedgePolicy policy = HedgePolicy.builder().name("llm").delay(DELAY).budget(1.0).meterRegistry(meters).build();
    fill(policy, 1);
    return policy;
  }

  /** Items at the given times after the stream is opened: {@code at(10, "meta", 500, "tok")}. */
  static Flux<String> timed(Object... timesAndItems) {
    Flux<String> items = Flux.empty();
    long previous = 0;
    for (int i = 0; i < timesAndItems.length; i += 2) {
      long at = ((Number) timesAndItems[i]).longValue();
      String item = (String) timesAndItems[i + 1];
      items = items.concatWith(Mono.delay(Duration.ofMillis(at - previous)).thenReturn(item));
      previous = at;
    }
    return items;
  }

  /** The n-th stream opened (0: the primary) is {@code script.apply(n)}; each one is probed. */
  Flux<String> llm(IntFunction<Flux<String>> script) {
    return Flux.defer(() -> {
      int n = streams.getAndIncrement();
      openedAtMillis.add(Schedulers.parallel().now(TimeUnit.MILLISECONDS));
      PublisherProbe<String> probe = PublisherProbe.of(script.apply(n));
      probes.add(probe);
      return probe.flux();
    });
  }

  @Test
  void theStreamWhoseFirstTokenCameFirstWinsAndOnlyItsItemsAreDelivered() {
    HedgePolicy policy = policy();
    Flux<String> llm = llm(n -> n == 0
        ? timed(10, "meta:primary", 100, "ping", 5000, "slow-token")
        : timed(10, "meta:hedge", 200, "fast-token", 300, "more", 400, "end"));
    StepVerifier.withVirtualTime(() -> llm.transformDeferred(hedgedBy(policy, IS_CONTENT)))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(500))
        .expectNext("meta:hedge", "fast-token")
        .thenAwait(Duration.ofMillis(200))
        .expectNext("more", "end")
        .expectComplete()
        .verify(VERIFY);
    assertThat(openedAtMillis).containsExactly(0L, 300L);
    probes.get(0).assertWasCancelled();
    assertThat(meters.counter("breakwater.hedge.won", "dependency", "llm").count()).isEqualTo(1);
  }

  @Test
  void heartbeatsAndFramingDoNotWinTheRace() {
    HedgePolicy policy = policy();
    Flux<String> llm = llm(n -> n == 0
        ? Flux.interval(Duration.ofMillis(100)).map(i -> "ping")
        : timed(150, "first"));
    StepVerifier.withVirtualTime(() -> llm.transformDeferred(hedgedBy(policy, IS_CONTENT)))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(450))
        .expectNext("first")
        .expectComplete()
        .verify(VERIFY);
    probes.get(0).assertWasCancelled();
  }

  @Test
  void afterTheFirstContentItemThereIsNoMoreHedgingHoweverLongTheStreamStalls() {
    HedgePolicy policy = policy();
    Flux<String> llm = llm(n -> timed(10, "meta", 200, "t1", 20_000, "t2", 40_000, "t3"));
    StepVerifier.withVirtualTime(() -> llm.transformDeferred(hedgedBy(policy, IS_CONTENT)))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(200))
        .expectNext("meta", "t1")
        .expectNoEvent(Duration.ofMillis(19_800))
        .expectNext("t2")
        .thenAwait(Duration.ofSeconds(20))
        .expectNext("t3")
        .expectComplete()
        .verify(VERIFY);
    assertThat(streams).as("no hedge after content").hasValue(1);
  }

  @Test
  void thePrimaryKeepsTheStreamIfItsFirstTokenBeatsTheHedgesAndItNeverSwitches() {
    HedgePolicy policy = policy();
    Flux<String> llm = llm(n -> n == 0
        ? timed(400, "p1", 10_000, "p2")                       // first token after the hedge started, then a stall
        : timed(150, "h1", 200, "h2", 300, "h3"));             // the hedge would be faster from here on
    StepVerifier.withVirtualTime(() -> llm.transformDeferred(hedgedBy(policy, IS_CONTENT)))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(400))
        .expectNext("p1")
        .expectNoEvent(Duration.ofMillis(9_600))
        .expectNext("p2")
        .expectComplete()
        .verify(VERIFY);
    assertThat(openedAtMillis).containsExactly(0L, 300L);
    probes.get(1).assertWasCancelled();
    probes.get(0).assertWasNotCancelled();
  }

  @Test
  void theWinnersItemsAreDeliveredOnlyAsTheyAreRequested() {
    HedgePolicy policy = policy();
    Flux<String> llm = llm(n -> n == 0 ? Flux.never() : Flux.just("meta", "a", "b", "c", "d"));
    StepVerifier.withVirtualTime(() -> llm.transformDeferred(hedgedBy(policy, IS_CONTENT)), 1)
        .expectSubscription()
        .thenAwait(DELAY)
        .expectNext("meta")
        .expectNoEvent(Duration.ofMillis(1))
        .thenRequest(2)
        .expectNext("a", "b")
        .expectNoEvent(Duration.ofMillis(1))
        .thenRequest(Long.MAX_VALUE)
        .expectNext("c", "d")
        .expectComplete()
        .verify(VERIFY);
  }

  @Test
  void aStreamThatEndsWithoutContentIsAnEmptyAnswerWithItsFraming() {
    HedgePolicy policy = policy();
    Flux<String> llm = llm(n -> timed(10, "meta", 20, "meta:done"));
    StepVerifier.withVirtualTime(() -> llm.transformDeferred(hedgedBy(policy, IS_CONTENT)))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(20))
        .expectNext("meta", "meta:done")
        .expectComplete()
        .verify(VERIFY);
  }

  @Test
  void withoutAPredicateEveryItemIsContent() {
    HedgePolicy policy = policy();
    Flux<String> llm = llm(n -> n == 0 ? timed(1000, "meta:late") : timed(50, "meta:hedge"));
    StepVerifier.withVirtualTime(() -> llm.transformDeferred(hedgedBy(policy)))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(350))
        .expectNext("meta:hedge")
        .expectComplete()
        .verify(VERIFY);
  }

  @Test
  void aPredicateThatThrowsFailsOnlyItsAttempt() {
    HedgePolicy policy = policy();
    Flux<String> llm = llm(n -> n == 0 ? timed(10, "poison", 20, "never seen") : timed(100, "fine"));
    StepVerifier.withVirtualTime(() -> llm.transformDeferred(hedgedBy(policy, s -> {
          if (s.equals("poison")) {
            throw new IllegalStateException("bad item");
          }
          return true;
        })))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(10))
        .expectErrorSatisfies(e -> assertThat(e).hasMessage("bad item"))
        .verify(VERIFY);
    assertThat(streams).as("the only attempt failed: no hedge").hasValue(1);
  }

  @Test
  void anAttemptSendingTooMuchBeforeItsFirstContentFails() {
    HedgePolicy policy = policy();
    Flux<String> llm = llm(n -> Flux.range(0, 257).map(i -> "meta" + i));
    StepVerifier.create(llm.transformDeferred(hedgedBy(policy, IS_CONTENT)))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("256 items before its first content item"))
        .verify(VERIFY);
  }

  @Test
  void aSubscriberRequestingFromInsideOnNextWhileTheHeadIsDeliveredGetsExactlyWhatItAskedFor() {
    HedgePolicy policy = policy();
    List<String> received = new CopyOnWriteArrayList<>();
    BaseSubscriber<String> oneMoreAtTheFirstToken = new BaseSubscriber<>() {
      @Override
      protected void hookOnSubscribe(Subscription subscription) {
        request(1);
      }

      @Override
      protected void hookOnNext(String item) {
        received.add(item);
        if (item.equals("meta") || item.equals("a")) {
          request(1);   // one more, asked while the winner's head is still being delivered
        }
      }
    };
    llm(n -> Flux.just("meta", "a", "b", "c", "d")).transformDeferred(hedgedBy(policy, IS_CONTENT))
        .subscribe(oneMoreAtTheFirstToken);
    assertThat(received).as("three items requested, three delivered").containsExactly("meta", "a", "b");
    oneMoreAtTheFirstToken.request(Long.MAX_VALUE);
    assertThat(received).containsExactly("meta", "a", "b", "c", "d");
    assertThat(oneMoreAtTheFirstToken.isDisposed()).as("completed").isTrue();
  }
}
