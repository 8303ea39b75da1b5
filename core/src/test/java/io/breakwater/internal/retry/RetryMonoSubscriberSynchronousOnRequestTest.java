package io.breakwater.internal.retry;

import static io.breakwater.Breakwater.retryWithBudget;

import io.breakwater.retry.RetryPolicy;
import io.breakwater.testing.SynchronousOnRequestVerification;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.function.Function;
import org.reactivestreams.Publisher;

/** The retry's {@code Mono} subscriber under re-entrant, synchronous sources. */
class RetryMonoSubscriberSynchronousOnRequestTest extends SynchronousOnRequestVerification {

  @Override
  protected <T> Function<Publisher<T>, Publisher<T>> operator() {
    return retryWithBudget(RetryPolicy.builder().name("sync-on-request").meterRegistry(new SimpleMeterRegistry())
        .build());
  }

  @Override
  protected boolean monoOnly() {
    return true;
  }
}
