package io.breakwater.internal.hedge;

import static io.breakwater.Breakwater.hedgedBy;

import io.breakwater.testing.SynchronousOnRequestVerification;
import java.util.function.Function;
import org.reactivestreams.Publisher;

/**
 * The hedge's subscriber under re-entrant, synchronous sources whose first items (1, 2 and 3) are framing, held until
 * the first content item and then delivered under the downstream's one-at-a-time demand.
 */
class HedgeSubscriberFramingSynchronousOnRequestTest extends SynchronousOnRequestVerification {

  @Override
  protected <T> Function<Publisher<T>, Publisher<T>> operator() {
    return hedgedBy(HedgeSubscriberSynchronousOnRequestTest.policy(), item -> !(item instanceof Integer i) || i > 3);
  }
}
