package io.breakwater.internal;

import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A blocking call of a third-party client (a chat model, a tool executor) as a {@code Mono} that runs it on a
 * scheduler whose threads may block: {@code Mono.fromCallable(call).subscribeOn(scheduler)}, except that a call that
 * fails after its subscriber left (cancelled by a timeout, a deadline, a hedge, which interrupts its thread; or a
 * client deaf to interrupts answering late) ends quietly. Its failure would otherwise reach
 * {@code Hooks.onErrorDropped}, which logs it at ERROR level by default: one alarming line per timeout.
 */
public final class BlockingCall {

  private BlockingCall() {}

  /** {@code call} on {@code scheduler}: its value (none if {@code null}) or its failure, until cancelled. */
  public static <T> Mono<T> on(Scheduler scheduler, Callable<? extends @Nullable T> call) {
    return Mono.defer(() -> {
      AtomicBoolean cancelled = new AtomicBoolean();
      return Mono.<T>fromCallable(() -> {
        try {
          return call.call();
        } catch (Exception e) {
          if (cancelled.get()) {
            return null;   // nobody waits for it: not an error to report
          }
          throw e;
        }
      })
          .subscribeOn(scheduler)
          .doOnCancel(() -> cancelled.set(true));   // before subscribeOn's cancel interrupts the call
    });
  }
}
