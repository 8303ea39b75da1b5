package io.breakwater.internal.stream.llm;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import reactor.core.publisher.Flux;

/**
 * The framing of one attempt before its first content: held, then delivered in order with the first content (or when
 * the attempt ends without any), so that a retry sees an attempt that delivered nothing until its first content. Per
 * subscription; used on one thread at a time, as Reactor signals are.
 *
 * @param <T> the attempt's items
 */
public final class FramingBuffer<T> {

  private final Predicate<? super T> isContent;
  private List<T> held = new ArrayList<>();
  private boolean content;

  private FramingBuffer(Predicate<? super T> isContent) {
    this.isContent = isContent;
  }

  /** {@code attempt} with its framing before the first content held until that content (or its end). */
  public static <T> Flux<T> heldUntilContent(Flux<T> attempt, Predicate<? super T> isContent) {
    return Flux.defer(() -> {
      FramingBuffer<T> held = new FramingBuffer<>(isContent);
      return attempt.concatMapIterable(held::pass).concatWith(Flux.defer(() -> Flux.fromIterable(held.release())));
    });
  }

  /** What to deliver now for {@code item}. */
  private List<T> pass(T item) {
    if (content) {
      return List.of(item);
    }
    held.add(item);
    if (!isContent.test(item)) {
      return List.of();
    }
    content = true;
    return release();
  }

  /** The items held so far, no longer held. */
  private List<T> release() {
    List<T> out = held;
    held = new ArrayList<>();
    return out;
  }
}
