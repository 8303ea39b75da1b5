package io.breakwater.internal.limit;

import io.breakwater.internal.Durations;
import io.breakwater.internal.StoreCallBound;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.LimitExceededException.Reason;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;

/**
 * The fail-open window of a shared limit: whether its store was found unreachable, so that it is left alone for
 * {@link SharedSettings#STORE_RETRY}, and what becomes of the calls that were waiting for it then: they go through
 * the limit's local fallback (fail-open) or are refused (fail-closed). Shared by the Redis rate and concurrency
 * limits. Thread-safe.
 */
final class StoreOutage {

  private volatile boolean down;
  private volatile long until;

  /**
   * Sends {@code request} to the store, bounded by {@code timeout}, unless the store is still left alone after an
   * outage: its one answer goes to {@code answered}, its failure or its silence to {@code unreachable}, with
   * {@code null} while the store is left alone. One answer per request: no completion callback, which a Mono's
   * subscriber runs after a value too, and the queue's head would then be taken as answered while its next request is
   * in flight (two requests, one permit lost).
   */
  <T> void ask(Mono<T> request, Duration timeout, Scheduler scheduler, Consumer<? super T> answered,
      Unreachable unreachable) {
    if (leaveAlone(scheduler.now(TimeUnit.NANOSECONDS))) {
      unreachable.didNotAnswer(null);
      return;
    }
    StoreCallBound.within(request, timeout, scheduler).subscribe(answered, unreachable::didNotAnswer);
  }

  /** Whether the store is still to be left alone at {@code now}; clears an outage that is over. */
  private boolean leaveAlone(long now) {
    if (down && now - until < 0) {
      return true;
    }
    down = false;
    return false;
  }

  /** The store did not answer at {@code now}. */
  void began(long now) {
    until = now + SharedSettings.STORE_RETRY.toNanos();
    down = true;
  }

  /**
   * The store did not answer: {@code error} (then the window opens at {@code now} and {@code log} says so), or
   * {@code null} while the window is open. Every one of {@code waiting}, already out of the limit's queue, then runs
   * through the local fallback ({@code failOpen}; its call sees no store permits) or is refused with
   * {@link Reason#STORE_UNAVAILABLE}.
   *
   * @param limit how the log names the limit: {@code Rate limit 'openai'}
   * @param fallback what fail-open does, for the log: {@code calls go through a local limit}
   */
  void letThroughOrRefuse(@Nullable Throwable error, long now, boolean failOpen, Logger log, String limit,
      String name, Object store, String fallback, List<? extends Turn> waiting) {
    if (error != null) {
      began(now);
      log.warn("{}: {} did not answer ({}); {} for {}", limit, store, error.toString(),
          failOpen ? fallback : "calls are refused", Durations.format(SharedSettings.STORE_RETRY));
    }
    for (Turn w : waiting) {
      if (failOpen) {
        if (w.grant()) {
          w.deliver();
        }
      } else {
        w.fail(new LimitExceededException(name, Reason.STORE_UNAVAILABLE, null, store + " did not answer and the "
            + "limit fails closed"));
      }
    }
  }

  /** What a limit's engine does when its store did not answer. */
  @FunctionalInterface
  interface Unreachable {
    /** {@code error}: why; {@code null} while the store is left alone after an earlier outage. */
    void didNotAnswer(@Nullable Throwable error);
  }
}
