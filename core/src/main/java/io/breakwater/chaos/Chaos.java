package io.breakwater.chaos;

import io.breakwater.internal.Saturating;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Fault injection for your own resilience tests, in the manner of Polly's chaos strategies: latency, errors, stalls,
 * truncated streams and heartbeat-only streams, each injected into a seeded share of subscriptions and switchable at
 * run time. Every fault works on {@code Mono} and {@code Flux} with {@code transformDeferred}; a {@code Mono} stays a
 * {@code Mono}.
 *
 * <pre>{@code
 * // In virtual time: 30 % of calls take 28 s longer, repeatably.
 * StepVerifier.withVirtualTime(() -> tool.call(args)
 *         .transformDeferred(Chaos.inject(Chaos.latency(Duration.ofSeconds(28)).rate(0.3).seed(7)))
 *         .transformDeferred(withDeadline(Duration.ofSeconds(10))))
 *     ...
 * }</pre>
 *
 * <table>
 *   <caption>Faults</caption>
 *   <tr><th>fault</th><th>what a hit subscription sees</th></tr>
 *   <tr><td>{@link #latency}</td><td>the call, subscribed {@code delay} later</td></tr>
 *   <tr><td>{@link #error}</td><td>the error, at once; the call is never made</td></tr>
 *   <tr><td>{@link #stallAfter}</td><td>the first {@code items} items, then nothing: no item, no completion
 *       (upstream is cancelled); a {@code Mono} with {@code items = 0} never answers</td></tr>
 *   <tr><td>{@link #truncateAfter}</td><td>the first {@code items} items, then completion, as a stream whose
 *       connection dropped before its terminal event</td></tr>
 *   <tr><td>{@link #heartbeatsOnly}</td><td>a heartbeat item every {@code every}, forever; the call is never
 *       made ({@code Flux} only)</td></tr>
 * </table>
 */
public final class Chaos {

  private Chaos() {}

  /**
   * The operator that injects {@code fault}; apply it with {@code transformDeferred}. Faults that only delay, fail,
   * stall or cut a call fit any item type; a {@link #heartbeatsOnly} fault must produce the stream's own item type.
   */
  @SuppressWarnings("unchecked")
  public static <T> Function<Publisher<T>, Publisher<T>> inject(Fault<? super T> fault) {
    return ((Fault<T>) fault).operator();
  }

  /** Subscribes to the call {@code delay} late. */
  public static <T> Fault<T> latency(Duration delay) {
    Fault.checkDuration("Latency", delay);
    Duration held = Saturating.delay(delay);   // forever: a hang
    return Fault.of("latency " + delay, (source, mono, scheduler) -> mono
        ? Mono.from(source).delaySubscription(held, scheduler)
        : Flux.from(source).delaySubscription(held, scheduler));
  }

  /** Fails with a fresh error from {@code error} instead of making the call. */
  public static <T> Fault<T> error(Supplier<? extends Throwable> error) {
    Objects.requireNonNull(error, "error");
    return Fault.of("error", (source, mono, scheduler) -> mono ? Mono.error(error) : Flux.error(error));
  }

  /** Lets {@code items} items through, then goes silent: neither items nor completion. {@code 0}: a hung call. */
  public static <T> Fault<T> stallAfter(int items) {
    checkItems(items);
    return Fault.of("stall after " + items, (source, mono, scheduler) -> {
      if (mono) {
        return items == 0 ? Mono.never() : source;
      }
      return Flux.from(source).take(items).concatWith(Flux.never());
    });
  }

  /** Lets {@code items} items through, then completes, as a stream cut before its terminal event. */
  public static <T> Fault<T> truncateAfter(int items) {
    checkItems(items);
    return Fault.of("truncate after " + items, (source, mono, scheduler) -> mono
        ? (items == 0 ? Mono.empty() : Mono.from(source))
        : Flux.from(source).take(items));
  }

  /** Replaces the stream with {@code heartbeat} items every {@code every}, forever: alive, but no progress. */
  public static <T> Fault<T> heartbeatsOnly(Supplier<? extends T> heartbeat, Duration every) {
    Objects.requireNonNull(heartbeat, "heartbeat");
    if (every.compareTo(Duration.ofMillis(1)) < 0) {   // a shorter one would be a busy loop of heartbeats
      throw new IllegalArgumentException("Heartbeat interval is " + every + ": give a positive duration of 1 ms or "
          + "more");
    }
    Duration period = Saturating.delay(every);   // forever: none come
    return Fault.of("heartbeats only", (source, mono, scheduler) -> {
      if (mono) {
        throw new IllegalArgumentException("heartbeatsOnly applies to streams (Flux); for a Mono, use stallAfter(0)");
      }
      // one-shot delays, not Flux.interval: cancelling a periodic task may park on the scheduler's queue lock
      return Mono.delay(period, scheduler).<T>map(x -> heartbeat.get()).repeat();
    });
  }

  private static void checkItems(int items) {
    if (items < 0) {
      throw new IllegalArgumentException("Item count is " + items + ": give 0 or more");
    }
  }
}
