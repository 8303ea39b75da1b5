package io.breakwater.internal;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeoutException;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Bounds a store call in time, as {@code Mono.timeout(Duration, Scheduler)} does, with the same one timer and the same
 * {@link TimeoutException}, but without its per-subscription cost: Reactor names the step of a timeout that has no
 * fallback at every subscription (a regular expression over the operator's class name), which a profile of a Redis
 * miss showed among its largest costs. Shared by {@code idempotentBy}, the Redis idempotency store, the owner's lease
 * renewal and the shared limits' store calls.
 */
public final class StoreCallBound {

  private StoreCallBound() {}

  /**
   * {@code call}, failing with a {@link TimeoutException} if it has not answered within {@code limit}. A call that
   * answers while it is subscribed (a {@link Callable} Mono, such as the in-memory stores' {@code Mono.fromSupplier})
   * is returned as it is: a timer could not cut it short, and arming and cancelling one is most of such a call's cost.
   */
  public static <T> Mono<T> within(Mono<T> call, Duration limit, Scheduler clock) {
    if (call instanceof Callable) {
      return call;
    }
    long nanos = Saturating.delayNanos(Saturating.nanos(limit));   // a bound of forever: as good as none
    return call.timeout(Mono.delay(Duration.ofNanos(nanos), clock), Mono.error(() -> new TimeoutException(
        "Did not observe any item or terminal signal within " + nanos / 1_000_000L + "ms")));
  }
}
