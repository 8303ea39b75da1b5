package io.breakwater.breaker;

import static io.breakwater.Breakwater.guardedBy;

import io.breakwater.failure.HttpStatusException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/** Drives synchronous calls through a breaker and tells what happened. */
final class Calls {

  private Calls() {}

  /** A breaker builder on {@code clock}, with its own meter registry and no ramp-up or slow-call trigger. */
  static CircuitBreaker.Builder on(VirtualTimeScheduler clock, String name) {
    return CircuitBreaker.builder(name)
        .scheduler(() -> clock)
        .meterRegistry(new SimpleMeterRegistry())
        .rampUp(java.time.Duration.ZERO)
        .noSlowCallTrigger();
  }

  /** Makes a call that fails with {@code error}; returns what the subscriber got. */
  static Throwable call(CircuitBreaker breaker, Throwable error) {
    return outcome(breaker, Mono.error(error));
  }

  static Throwable fail(CircuitBreaker breaker) {
    return call(breaker, new HttpStatusException(503));
  }

  static Throwable succeed(CircuitBreaker breaker) {
    return outcome(breaker, Mono.just("ok"));
  }

  /** The error the subscriber got, or {@code null} on success. */
  static Throwable outcome(CircuitBreaker breaker, Mono<String> call) {
    AtomicReference<Throwable> error = new AtomicReference<>();
    call.transformDeferred(guardedBy(breaker)).subscribe(v -> {}, error::set);
    return error.get();
  }

  /** A call that counts its subscriptions. */
  static Mono<String> counting(AtomicInteger subscriptions, Mono<String> call) {
    return Mono.defer(() -> {
      subscriptions.incrementAndGet();
      return call;
    });
  }

  static void failTimes(CircuitBreaker breaker, int times) {
    for (int i = 0; i < times; i++) {
      fail(breaker);
    }
  }
}
