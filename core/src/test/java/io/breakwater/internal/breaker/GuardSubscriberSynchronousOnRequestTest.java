package io.breakwater.internal.breaker;

import static io.breakwater.Breakwater.guardedBy;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.testing.SynchronousOnRequestVerification;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.function.Function;
import org.reactivestreams.Publisher;

/** The breaker's subscriber under re-entrant, synchronous sources. */
class GuardSubscriberSynchronousOnRequestTest extends SynchronousOnRequestVerification {

  @Override
  protected <T> Function<Publisher<T>, Publisher<T>> operator() {
    return guardedBy(CircuitBreaker.builder("sync-on-request").slowCall(Duration.ofSeconds(1), 0.5)
        .meterRegistry(new SimpleMeterRegistry()).build());
  }
}
