package io.breakwater.internal.stream;

import static io.breakwater.Breakwater.streamTimeouts;

import io.breakwater.stream.StreamTimeouts;
import io.breakwater.testing.SynchronousOnRequestVerification;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.function.Function;
import org.reactivestreams.Publisher;

/** The stream timeouts' subscriber under re-entrant, synchronous sources. */
class StreamTimeoutSubscriberSynchronousOnRequestTest extends SynchronousOnRequestVerification {

  @Override
  protected <T> Function<Publisher<T>, Publisher<T>> operator() {
    return streamTimeouts(StreamTimeouts.builder().firstItem(Duration.ofSeconds(5)).idle(Duration.ofSeconds(2))
        .meterRegistry(new SimpleMeterRegistry()).build());
  }
}
