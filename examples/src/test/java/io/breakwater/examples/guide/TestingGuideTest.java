package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.*;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.chaos.Chaos;
import io.breakwater.chaos.Fault;
import io.breakwater.examples.guide.Domain.Flights;
import io.breakwater.examples.guide.Domain.Offers;
import io.breakwater.examples.guide.Domain.Query;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.retry.Backoff;
import io.breakwater.deadline.DeadlineExceededException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The snippets of {@code docs/testing.md}, as the tests they are. */
class TestingGuideTest {

  // snippet:testing-virtual-time
  @Test
  void aHungDependencyIsRetriedOnItsOwnBudgetsUntilNoAttemptFitsBeforeTheDeadline() {
    Query query = new Query("LYS", "LIS", "2026-12-24");
    AtomicInteger attempts = new AtomicInteger();
    Flights client = q -> Mono.<Offers>never().doOnSubscribe(s -> attempts.incrementAndGet());

    StepVerifier.withVirtualTime(() -> client.search(query)
            .transformDeferred(perCallTimeout())
            .transformDeferred(retryWithBudget(Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))))
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(10))
        .expectError(DeadlineExceededException.class)   // a TimeoutException: no time left for another attempt
        .verify();

    assertThat(attempts.get()).as("6 s, then a share of what is left, until the deadline or 3 retries")
        .isBetween(2, 4);
  }
  // end-snippet

  // snippet:testing-chaos
  @Test
  void aSwitchableSeededOutageHitsAboutItsRateAndStopsWhenSwitchedOff() {
    Query query = new Query("LYS", "LIS", "2026-12-24");
    AtomicInteger calls = new AtomicInteger();
    Flights flights = q -> Mono.fromSupplier(() -> new Offers(List.of("BW" + calls.incrementAndGet())));

    AtomicBoolean chaosOn = new AtomicBoolean(true);
    Fault<Object> outage = Chaos.error(() -> new HttpStatusException(503)).rate(0.2).seed(42).enabledWhen(chaosOn::get);

    Mono<Offers> offers = flights.search(query).transformDeferred(Chaos.inject(outage));

    long failed = Flux.range(0, 1_000).concatMap(i -> offers.map(o -> 0).onErrorResume(e -> Mono.just(1)))
        .filter(f -> f == 1).count().block();
    chaosOn.set(false);
    long failedWhenOff = Flux.range(0, 100).concatMap(i -> offers.map(o -> 0).onErrorResume(e -> Mono.just(1)))
        .filter(f -> f == 1).count().block();

    assertThat(failed).as("about 20% of 1 000 subscriptions, seed 42").isBetween(150L, 250L);
    assertThat(calls.get()).as("a hit subscription never reaches the call").isEqualTo(1_000 - failed + 100);
    assertThat(failedWhenOff).isZero();
  }
  // end-snippet
}
