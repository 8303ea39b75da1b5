package io.breakwater;

import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.internal.deadline.DeadlineOperator;
import java.time.Duration;
import java.util.function.Function;
import org.reactivestreams.Publisher;

/**
 * The one entry point to Breakwater's operators. Each is a plain function for {@code transformDeferred} (or
 * {@code transform}) that works on both {@code Mono} and {@code Flux}; a {@code Mono} stays a {@code Mono}. The
 * functions hold no per-call state: everything a call needs is created when it is subscribed, so one operator can be
 * stored and shared.
 *
 * <pre>{@code
 * import static io.breakwater.Breakwater.*;
 *
 * Mono<Flights> flights = client.searchFlights(query)
 *     .transformDeferred(withDeadline(Duration.ofSeconds(10)));
 * }</pre>
 *
 * <h2>Composition order</h2>
 * Operators apply to what is upstream of them, so the one written last is the outermost. Put the deadline outermost:
 * every inner operator reads it from the Reactor Context and bounds its own waits by it.
 */
public final class Breakwater {

  private Breakwater() {}

  /**
   * Bounds everything upstream by a deadline {@code budget} from subscription, with every other setting of
   * {@link DeadlineSpec} at its default.
   *
   * @see #withDeadline(DeadlineSpec)
   */
  public static <T> Function<Publisher<T>, Publisher<T>> withDeadline(Duration budget) {
    return withDeadline(DeadlineSpec.of(budget));
  }

  /**
   * Bounds everything upstream by a deadline: an absolute {@link Deadline}, {@code spec.budget()} from subscription,
   * written into the Reactor Context so that every inner operator and user code can read it.
   *
   * <ul>
   *   <li><b>Nesting only tightens.</b> If a deadline earlier than this one is already in force, it stays in force
   *       (and this operator adds nothing); otherwise this one replaces it for everything upstream.</li>
   *   <li><b>Expiry.</b> When the deadline passes, upstream is cancelled and the subscriber gets a
   *       {@link DeadlineExceededException} (a {@link java.util.concurrent.TimeoutException}) that names the budget
   *       and says how much of it was used. Items a {@code Flux} emitted before are kept.</li>
   *   <li><b>Already expired.</b> A zero budget, or a deadline already past at subscription, fails at once
   *       without subscribing upstream: no call is made.</li>
   *   <li><b>Time</b> comes from {@code spec.scheduler()}, resolved at subscription.</li>
   * </ul>
   */
  public static <T> Function<Publisher<T>, Publisher<T>> withDeadline(DeadlineSpec spec) {
    return new DeadlineOperator<>(spec);
  }
}
