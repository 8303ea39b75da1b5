package io.breakwater.internal;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CorePublisher;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoOperator;

/**
 * Wraps a source so that subscribing to it goes through a hand-written operator's own subscribe logic: a {@code Mono}
 * stays a {@code Mono}, anything else becomes a {@code Flux}. One pair of wrapper classes for every such operator
 * (deadlines, breakers, stream timeouts), named after the operator in Reactor's scans.
 */
public final class Lift {

  private Lift() {}

  /** What an operator does when its wrapped source is subscribed. */
  @FunctionalInterface
  public interface OnSubscribe<T> {
    /**
     * Subscribes {@code actual} to {@code source} through the operator.
     *
     * @param mono whether the source is a {@code Mono} (at most one item)
     */
    void subscribe(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono);
  }

  /**
   * Subscribes {@code actual} to {@code source} as Reactor's own operators subscribe to theirs: a Reactor publisher
   * through {@link CorePublisher#subscribe(CoreSubscriber)}, without the hooks and checks of a subscription from
   * outside the chain (which the subscription of the chain's last operator has made already).
   */
  @SuppressWarnings("unchecked")
  public static <T> void subscribeInside(Publisher<? extends T> source, CoreSubscriber<? super T> actual) {
    if (source instanceof CorePublisher<?> core) {
      ((CorePublisher<T>) core).subscribe(actual);
    } else {
      source.subscribe(actual);
    }
  }

  /** {@code source} wrapped so that each subscription goes through {@code onSubscribe}. */
  public static <T> Publisher<T> apply(Publisher<T> source, String name, OnSubscribe<T> onSubscribe) {
    if (source instanceof Mono<T> mono) {
      return new MonoLift<>(mono, name, onSubscribe);
    }
    return new FluxLift<>(Flux.from(source), name, onSubscribe);
  }

  static final class MonoLift<T> extends MonoOperator<T, T> {
    private final String name;
    private final OnSubscribe<T> onSubscribe;

    MonoLift(Mono<? extends T> source, String name, OnSubscribe<T> onSubscribe) {
      super(source);
      this.name = name;
      this.onSubscribe = onSubscribe;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
      onSubscribe.subscribe(source, actual, true);
    }

    @Override
    @Nullable
    public Object scanUnsafe(Attr key) {
      return key == Attr.NAME ? name : super.scanUnsafe(key);
    }
  }

  static final class FluxLift<T> extends FluxOperator<T, T> {
    private final String name;
    private final OnSubscribe<T> onSubscribe;

    FluxLift(Flux<? extends T> source, String name, OnSubscribe<T> onSubscribe) {
      super(source);
      this.name = name;
      this.onSubscribe = onSubscribe;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
      onSubscribe.subscribe(source, actual, false);
    }

    @Override
    @Nullable
    public Object scanUnsafe(Attr key) {
      return key == Attr.NAME ? name : super.scanUnsafe(key);
    }
  }
}
