package io.breakwater.internal;

import io.breakwater.internal.deadline.WheelTimeout;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeoutException;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Bounds a store call in time, as {@code Mono.timeout(Duration, Scheduler)} does, with the same
 * {@link TimeoutException}, but on a deadline's timer wheel ({@link WheelTimeout}): Reactor's timeout names its step
 * at every subscription (a regular expression over the operator's class name) and arms a task on the scheduler for
 * every call (a heap insert and removal under the executor's lock, often a wake-up of its thread), which profiles of
 * Redis hits and misses showed among their largest costs. Shared by {@code idempotentBy}, the Redis idempotency
 * store, the owner's lease renewal and the shared limits' store calls.
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
    return new WheelTimeout<>(call, Saturating.nanos(limit), clock);   // a bound of forever: as good as none
  }
}
