package io.breakwater.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.testing.TaskCountingScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
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

  @Test
  void boundedCallsThatAnswerShareTheirTimersTaskInsteadOfSchedulingOneEach() {
    TaskCountingScheduler clock = new TaskCountingScheduler(VirtualTimeScheduler.create());
    for (int i = 0; i < 1_000; i++) {
      Sinks.One<Integer> store = Sinks.one();
      List<Integer> answers = new ArrayList<>();
      StoreCallBound.within(store.asMono(), Duration.ofSeconds(2), clock).subscribe(answers::add);
      store.tryEmitValue(i);
      assertThat(answers).containsExactly(i);
    }
    assertThat(clock.scheduledTasks()).as("tasks on the scheduler for 1 000 bounded calls").isEqualTo(1);
  }
}
