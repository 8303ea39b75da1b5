package io.breakwater.internal;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/** {@link StoreCallBound#within}: a store call bounded in time, whatever the bound a store was configured with. */
class StoreCallBoundTest {

  static final Duration VERIFY = Duration.ofSeconds(5);

  @Test
  void aBoundOfForeverLetsTheCallAnswerAsItWouldWithoutOne() {
    // a store's operationTimeout of ChronoUnit.FOREVER.getDuration(): Mono.delay's toNanos() threw at assembly
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    Mono<String> store = Mono.delay(Duration.ofMillis(10), clock).thenReturn("stored");
    StepVerifier.withVirtualTime(() -> StoreCallBound.within(store, Duration.ofSeconds(Long.MAX_VALUE), clock),
            () -> clock, Long.MAX_VALUE)
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(9))
        .thenAwait(Duration.ofMillis(1))
        .expectNext("stored")
        .expectComplete()
        .verify(VERIFY);
  }

  @Test
  void aCallThatDoesNotAnswerWithinItsBoundFailsWithATimeout() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    StepVerifier.withVirtualTime(() -> StoreCallBound.within(Mono.never(), Duration.ofMillis(500), clock),
            () -> clock, Long.MAX_VALUE)
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(499))
        .thenAwait(Duration.ofMillis(1))
        .expectError(TimeoutException.class)
        .verify(VERIFY);
  }
}
