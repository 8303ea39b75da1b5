package io.breakwater.internal.limit;

import static io.breakwater.Breakwater.throttledBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.limit.RateLimit;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The in-memory rate limit's one timer, for the head of its queue, is set again whenever the head still waits. */
class RateQueueTimerTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

  @AfterEach
  void stop() {
    clock.dispose();
  }

  @Test
  void twentyFiveCallsOnElevenRequestsAMinuteAllRunOnceTheirRequestsAreBack() {
    RateLimit limit = RateLimit.builder("openai").requests(11, Duration.ofMinutes(1))
        .maxWait(Duration.ofHours(1)).scheduler(() -> clock).build();
    AtomicInteger ran = new AtomicInteger();
    for (int i = 0; i < 25; i++) {
      Mono.fromRunnable(ran::incrementAndGet).transformDeferred(throttledBy(limit)).subscribe();
    }
    assertThat(ran).as("the bucket's 11 requests at once").hasValue(11);

    clock.advanceTimeBy(Duration.ofMinutes(2));   // the 14 requests the queue needs come back within 77 s
    assertThat(ran).as("calls run once their requests are back").hasValue(25);
    assertThat(limit.queued()).isZero();
  }
}
