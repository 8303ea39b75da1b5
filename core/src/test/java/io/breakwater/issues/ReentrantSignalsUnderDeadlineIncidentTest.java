package io.breakwater.issues;

import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.testing.RecursiveOnRequestPublisher;
import io.breakwater.testing.SignalRecorder;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Review defect 7: {@code withDeadline} discarded an item or a completion that arrived while its own {@code onNext}
 * was still running (a publisher that emits synchronously from {@code request(n)}, as rule 3.3 allows). With
 * {@code limitRate(1)} downstream only the first item arrived, and 10 s later a stream that had completed ended
 * with {@code DeadlineExceededException}. Re-entrant signals are now delivered in order; only the timer's expiry may
 * win a race.
 */
class ReentrantSignalsUnderDeadlineIncidentTest {

  @Test
  void aStreamThatEmitsFromInsideRequestKeepsEveryItemAndItsCompletion() {
    StepVerifier.withVirtualTime(() -> Flux.from(new RecursiveOnRequestPublisher<>(List.of("a", "b", "c"), null, 64))
            .transformDeferred(withDeadline(Duration.ofSeconds(10)))
            .limitRate(1))
        .expectNext("a", "b", "c")
        .expectComplete()
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void aStreamThatFailsFromInsideRequestKeepsItsOwnError() {
    StepVerifier.withVirtualTime(() -> Flux.from(new RecursiveOnRequestPublisher<>(List.of("a", "b"),
                new IllegalStateException("upstream failed"), 64))
            .transformDeferred(withDeadline(Duration.ofSeconds(10)))
            .limitRate(1))
        .expectNext("a", "b")
        .expectErrorMessage("upstream failed")
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void aDeadlineThatPassesWhileAReentrantItemIsDeliveredEndsTheStreamAfterThatItem() {
    VirtualTimeScheduler vts = VirtualTimeScheduler.getOrSet();
    try {
      RecursiveOnRequestPublisher<String> source = new RecursiveOnRequestPublisher<>(List.of("a", "b", "c"), null, 64);
      // no request at subscription, so the deadline's timer is armed; then one item at a time from inside onNext
      SignalRecorder<String> downstream = new SignalRecorder<>(0, (self, value) -> {
        if (value.equals("b")) {
          vts.advanceTimeBy(Duration.ofSeconds(10));   // the timer fires while "b", re-entrant, is delivered
        }
        self.request(1);
      });
      Flux.from(source).transformDeferred(withDeadline(Duration.ofSeconds(10))).subscribe(downstream);
      downstream.request(1);
      assertThat(downstream.signals()).containsExactly("a", "b", "error: DeadlineExceededException");
      assertThat(source.cancellations()).isEqualTo(1);
    } finally {
      VirtualTimeScheduler.reset();
    }
  }
}
