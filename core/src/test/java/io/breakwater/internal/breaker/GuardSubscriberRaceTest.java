package io.breakwater.internal.breaker;

import static io.breakwater.Breakwater.guardedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Sinks;

/**
 * The review suspected that {@code GuardSubscriber}'s plain fields, read across threads, could record a cancel that
 * follows the first element as {@code CANCELLED}. With a happens-before edge from the element to the cancel (the
 * downstream hands the element to the cancelling thread), the outcome must be a success every time; the first-element
 * flag is now published with release/acquire together with its time, and "during subscription" is judged on the
 * subscribing thread only.
 */
class GuardSubscriberRaceTest {

  @Test
  void aCancelThatFollowsTheFirstElementOnAnotherThreadIsAlwaysASuccess() throws Exception {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    CircuitBreaker breaker = CircuitBreaker.builder("race").slowCall(Duration.ofSeconds(30), 0.5)
        .meterRegistry(meters).build();
    ExecutorService emitter = Executors.newSingleThreadExecutor();
    ExecutorService canceller = Executors.newSingleThreadExecutor();
    int rounds = 2_000;
    try {
      for (int i = 0; i < rounds; i++) {
        Sinks.Many<Integer> source = Sinks.many().unicast().onBackpressureBuffer();
        CompletableFuture<Disposable> subscription = new CompletableFuture<>();
        CompletableFuture<Void> cancelled = new CompletableFuture<>();
        subscription.complete(source.asFlux().transformDeferred(guardedBy(breaker))
            .subscribe(item -> canceller.execute(() -> {   // the element reaches another thread, which cancels
              subscription.join().dispose();
              cancelled.complete(null);
            })));
        emitter.submit(() -> source.tryEmitNext(42)).get();
        cancelled.get(5, TimeUnit.SECONDS);
      }
    } finally {
      emitter.shutdownNow();
      canceller.shutdownNow();
    }
    assertThat(meters.get("breakwater.breaker.calls").tag("outcome", "success").functionCounter().count())
        .isEqualTo(rounds);
    assertThat(meters.find("breakwater.breaker.calls").tag("outcome", "cancelled").counter()).satisfiesAnyOf(
        c -> assertThat(c).isNull(), c -> assertThat(c.count()).isZero());
  }
}
