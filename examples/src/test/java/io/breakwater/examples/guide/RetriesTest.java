package io.breakwater.examples.guide;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.examples.guide.Domain.Offers;
import io.breakwater.examples.guide.Domain.Query;
import io.breakwater.examples.guide.Retries.Event;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.channel.AbortedException;
import reactor.test.StepVerifier;

class RetriesTest {

  private final Query query = new Query("LYS", "LIS", "2026-12-24");

  @Test
  void twoServerErrorsAreRetriedAndTheThirdAttemptAnswers() {
    AtomicInteger calls = new AtomicInteger();
    Offers offers = new Offers(List.of("BW123"));

    StepVerifier.withVirtualTime(() -> Retries.offers(q -> Mono.defer(() -> calls.incrementAndGet() < 3
            ? Mono.error(new HttpStatusException(503)) : Mono.just(offers)), query))
        .thenAwait(Duration.ofSeconds(20))
        .expectNext(offers)
        .verifyComplete();
    assertThat(calls).hasValue(3);
  }

  @Test
  void anInvalidArgumentIsTriedOnce() {
    AtomicInteger calls = new AtomicInteger();

    StepVerifier.withVirtualTime(() -> Retries.offers(
            q -> Mono.defer(() -> {
              calls.incrementAndGet();
              return Mono.error(new HttpStatusException(400));
            }), query))
        .thenAwait(Duration.ofSeconds(20))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(HttpStatusException.class))
        .verify();
    assertThat(calls).hasValue(1);
  }

  @Test
  void aDroppedStreamResumesAfterTheLastDeliveredEvent() {
    List<String> asked = Collections.synchronizedList(new ArrayList<>());
    Retries.EventSource sse = (path, lastEventId) -> {
      asked.add(String.valueOf(lastEventId));
      return lastEventId == null
          ? Flux.just(new Event("1", "a"), new Event("2", "b")).concatWith(Flux.error(new AbortedException("reset")))
          : Flux.just(new Event("3", "c"));
    };
    RetryPolicy policy = RetryPolicy.builder().name("events")
        .backoff(Backoff.fullJitter(Duration.ofMillis(100), Duration.ofSeconds(1))).build();

    StepVerifier.withVirtualTime(() -> Retries.events(sse, policy))
        .thenAwait(Duration.ofSeconds(2))
        .expectNextMatches(e -> e.id().equals("1"))
        .expectNextMatches(e -> e.id().equals("2"))
        .expectNextMatches(e -> e.id().equals("3"))
        .verifyComplete();
    assertThat(asked).containsExactly("null", "2");
  }
}
