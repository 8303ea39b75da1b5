package io.breakwater.internal.limit;

import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.throttledBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * A caller that leaves while its call is being queued, at the moment the queue finds its permits free: the limit's
 * monitor is held until the subscribing thread is blocked on it, the permits come free and the caller cancels, then
 * the monitor is let go. The permits granted to the gone caller must come back.
 */
class CancelledWhileQueuedTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

  @AfterEach
  void stop() {
    clock.dispose();
  }

  @Test
  void aConcurrencyPermitFoundWhileItsCallerCancelsDuringQueueingComesBack() throws InterruptedException {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("search").fixed(1).maxWait(Duration.ofMinutes(1))
        .scheduler(() -> clock).build();
    Sinks.Empty<Void> first = Sinks.empty();
    first.asMono().transformDeferred(limitedBy(limit)).subscribe();
    assertThat(limit.inFlight()).isOne();

    cancelWhileQueueing(limit, Mono.never().transformDeferred(limitedBy(limit)),
        () -> first.tryEmitEmpty());   // the permit comes free while the second call waits for the monitor

    assertThat(limit.inFlight()).as("the permit granted to the caller that left").isZero();
    assertThat(limit.queued()).isZero();
    Sinks.Empty<Void> third = Sinks.empty();
    third.asMono().transformDeferred(limitedBy(limit)).subscribe();
    assertThat(limit.inFlight()).as("a later call gets the permit").isOne();
  }

  @Test
  void aRequestFoundWhileItsCallerCancelsDuringQueueingComesBack() throws InterruptedException {
    RateLimit limit = RateLimit.builder("openai").requests(1, Duration.ofMinutes(1)).maxWait(Duration.ofMinutes(5))
        .scheduler(() -> clock).build();
    Mono.empty().transformDeferred(throttledBy(limit)).subscribe();
    assertThat(limit.availableRequests()).isZero();

    cancelWhileQueueing(limit, Mono.never().transformDeferred(throttledBy(limit)),
        () -> clock.advanceTimeBy(Duration.ofMinutes(1)));   // the request comes back while the call waits

    assertThat(limit.queued()).isZero();
    assertThat(limit.availableRequests()).as("the request taken for the caller that left").isOne();
  }

  /**
   * Subscribes {@code call} on another thread while this one holds {@code monitor}; once that thread is blocked on
   * it, runs {@code free} and cancels the call, then lets the monitor go and waits for the subscription to end.
   */
  private static void cancelWhileQueueing(Object monitor, Mono<?> call, Runnable free) throws InterruptedException {
    BaseSubscriber<Object> caller = new BaseSubscriber<>() {};
    Thread subscriber = new Thread(() -> call.subscribe(caller), "subscriber");
    synchronized (monitor) {
      subscriber.start();
      while (subscriber.getState() != Thread.State.BLOCKED) {
        Thread.onSpinWait();
      }
      free.run();
      caller.dispose();
    }
    subscriber.join(10_000);
    assertThat(subscriber.isAlive()).isFalse();
  }
}
