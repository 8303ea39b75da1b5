package io.breakwater.internal.hedge;

import static io.breakwater.Breakwater.hedgedBy;

import io.breakwater.hedge.HedgePolicy;
import io.breakwater.testing.SynchronousOnRequestVerification;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.function.Function;
import org.reactivestreams.Publisher;

/** The hedge's subscriber under re-entrant, synchronous sources, every item counting as the answer. */
class HedgeSubscriberSynchronousOnRequestTest extends SynchronousOnRequestVerification {

  static HedgePolicy policy() {
    return HedgePolicy.builder().name("sync").delay(Duration.ofSeconds(5)).budget(1.0)
        .meterRegistry(new SimpleMeterRegistry()).build();
  }

  @Override
  protected <T> Function<Publisher<T>, Publisher<T>> operator() {
    return hedgedBy(policy());
  }
}
