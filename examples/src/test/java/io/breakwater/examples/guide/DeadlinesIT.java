package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.examples.guide.Domain.Offers;
import io.breakwater.examples.guide.Domain.Query;
import io.breakwater.examples.guide.Domain.TripRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The snippets of docs/deadline.md. */
class DeadlinesIT {

  private final Query query = new Query("LYS", "LIS", "2026-12-24");

  @Test
  void aPlanThatNeverAnswersEndsAtItsNamedDeadline() {
    StepVerifier.withVirtualTime(() -> Deadlines.plan(request -> Mono.never(), new TripRequest("Lyon")))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(30))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(DeadlineExceededException.class)
            .hasMessageContaining("'plan-trip'"))
        .verify();
  }

  @Test
  void aClientWithItsOwnTimeoutGetsTheTimeLeftOrThirtySeconds() {
    AtomicReference<Duration> given = new AtomicReference<>();
    Deadlines.TimedFlights client = (q, timeout) -> {
      given.set(timeout);
      return Mono.just(new Offers(List.of()));
    };

    StepVerifier.withVirtualTime(() -> Deadlines.searchWithinDeadline(client, query)).expectNextCount(1)
        .verifyComplete();
    assertThat(given.get()).isEqualTo(Duration.ofSeconds(30));

    StepVerifier.withVirtualTime(() -> Deadlines.searchWithinDeadline(client, query)
            .transformDeferred(withDeadline(Duration.ofSeconds(5))))
        .expectNextCount(1).verifyComplete();
    assertThat(given.get()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void blockingCodeReadsTheDeadlineFromItsThread() {
    AtomicReference<Duration> given = new AtomicReference<>();

    String answer = Deadlines.legacy(timeout -> {
      given.set(timeout);
      return "done";
    }).block(Duration.ofSeconds(10));

    assertThat(answer).isEqualTo("done");
    assertThat(given.get()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void theServerReceivesNoMoreTimeThanTheClientHasLeft() {
    try (Deadlines.Service service = Deadlines.service(
        request -> String.valueOf(request.requestHeaders().get(DeadlineHeader.DEFAULT_NAME)))) {

      String received = service.client().get().uri("/").responseContent().aggregate().asString()
          .transformDeferred(withDeadline(Duration.ofSeconds(2)))
          .block(Duration.ofSeconds(10));

      assertThat(received).isNotEqualTo("null");
      assertThat(DeadlineHeader.parse(received)).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(2).toNanos());
    }
  }
}
