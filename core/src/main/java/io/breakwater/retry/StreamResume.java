package io.breakwater.retry;

import io.breakwater.internal.ContextKeys;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import reactor.util.context.ContextView;

/**
 * Lets {@code retryWithBudget} retry a {@code Flux} that has already emitted items, by subscribing again from the
 * last delivered position and dropping items that were already delivered. Without it a {@code Flux} is retried only
 * while it has emitted nothing, because subscribing again would duplicate its output.
 *
 * <p>The source reads the position to continue after from its Context, with {@link #lastDelivered}: empty on the
 * first attempt, the id or sequence number of the last delivered item on a retry.
 *
 * <pre>{@code
 * Flux<Event> events = Flux.deferContextual(ctx -> sse.stream("/events",
 *         StreamResume.lastDelivered(ctx).map(String::valueOf).orElse(null)))   // e.g. Last-Event-ID
 *     .transformDeferred(retryWithBudget(policy, StreamResume.byId(Event::id)));
 * }</pre>
 *
 * <p>{@link #bySequence} drops every item whose number is not above the last delivered one; {@link #byId} drops
 * items whose id was already delivered by this subscription (it remembers the ids delivered). Immutable.
 */
public final class StreamResume<T> {

  private final Function<? super T, ?> positionOf;
  private final boolean ordered;

  private StreamResume(Function<? super T, ?> positionOf, boolean ordered) {
    this.positionOf = positionOf;
    this.ordered = ordered;
  }

  /** Resume after the item with the highest sequence number delivered; numbers must increase along the stream. */
  public static <T> StreamResume<T> bySequence(ToLongFunction<? super T> sequenceOf) {
    Objects.requireNonNull(sequenceOf, "sequenceOf");
    return new StreamResume<>(item -> sequenceOf.applyAsLong(item), true);
  }

  /** Resume after the item with the last delivered id; ids must be unique within the stream. */
  public static <T> StreamResume<T> byId(Function<? super T, ?> idOf) {
    Objects.requireNonNull(idOf, "idOf");
    return new StreamResume<>(idOf, false);
  }

  /**
   * The position to continue after, in the Context of a resumed attempt: a {@code Long} for {@link #bySequence},
   * the id for {@link #byId}; empty on the first attempt or before anything was delivered.
   */
  public static Optional<Object> lastDelivered(ContextView context) {
    return Optional.ofNullable(context.getOrDefault(ContextKeys.RESUME_POSITION, null));
  }

  /** The position of {@code item}: its sequence number (a {@code Long}) or its id. */
  public Object positionOf(T item) {
    return Objects.requireNonNull(positionOf.apply(item), "the position of an item is null");
  }

  /** Whether positions are increasing sequence numbers ({@link #bySequence}) rather than ids. */
  public boolean isSequence() {
    return ordered;
  }
}
