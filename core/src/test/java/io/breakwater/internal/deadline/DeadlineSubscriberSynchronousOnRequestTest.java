package io.breakwater.internal.deadline;

import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.withDeadline;

import io.breakwater.testing.SynchronousOnRequestVerification;
import java.time.Duration;
import java.util.function.Function;
import org.reactivestreams.Publisher;

/** The deadline's subscriber (task deadline and per-call timeout, nested) under re-entrant, synchronous sources. */
class DeadlineSubscriberSynchronousOnRequestTest extends SynchronousOnRequestVerification {

  @Override
  protected <T> Function<Publisher<T>, Publisher<T>> operator() {
    Function<Publisher<T>, Publisher<T>> perCall = perCallTimeout(Duration.ofSeconds(5));
    Function<Publisher<T>, Publisher<T>> deadline = withDeadline(Duration.ofSeconds(10));
    return perCall.andThen(deadline);
  }
}
