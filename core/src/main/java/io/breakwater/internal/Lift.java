package io.breakwater.internal;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable.Attr;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoOperator;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

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
   * Subscribes an operator's own subscriber to its upstream as Reactor's operators do: straight to
   * {@code subscribe(CoreSubscriber)} of a {@code Mono} or {@code Flux}. {@code Publisher.subscribe(Subscriber)} does
   * what a subscription made by user code needs and an operator's does not: the last-operator hook (which would then
   * run again at every hand-written operator of a chain), the subscriber's conversion, and the walk over fused
   * operators with its interface type checks, which cost more than a whole breaker on JDK 17 (its one-entry cache of
   * secondary supertypes thrashes). With automatic context propagation on, it takes the public path, which restores
   * thread-locals around a publisher Reactor does not know. A source that throws while subscribing fails
   * {@code subscriber}, as on the public path, so that the operator still settles what it holds.
   */
  public static <T> void subscribeUpstream(Publisher<? extends T> source, CoreSubscriber<? super T> subscriber) {
    if (Hooks.isAutomaticContextPropagationEnabled()) {
      source.subscribe(subscriber);
      return;
    }
    try {
      if (source instanceof Mono<? extends T> mono) {
        mono.subscribe(subscriber);
      } else if (source instanceof Flux<? extends T> flux) {
        flux.subscribe(subscriber);
      } else {
        source.subscribe(subscriber);
      }
    } catch (Throwable e) {
      Operators.reportThrowInSubscribe(subscriber, e);
    }
  }

  /**
   * Cancels an operator's upstream for a reason of its own (a deadline, a stream timeout, a hedge that lost), after
   * which the operator still has a signal to send. What a misbehaving source throws from {@code cancel} (Reactive
   * Streams rule 3.15 says it must not; SDKs that drain a body on the cancelling thread do, under BlockHound) is
   * dropped to {@code Hooks.onErrorDropped}, so that the signal still goes out.
   */
  public static void cancelUpstream(Subscription upstream, Context context) {
    try {
      upstream.cancel();
    } catch (Throwable e) {
      Operators.onErrorDropped(e, context);
    }
  }

  /**
   * What Reactor's scans read of a hand-written operator's subscriber that relays one upstream on the caller's thread:
   * its {@code upstream} ({@code PARENT}), its {@code actual} subscriber, whether it has {@code ended}
   * ({@code TERMINATED} and {@code CANCELLED} alike) and its run style; {@code null} for any other attribute (its
   * {@code NAME} is the caller's to answer).
   */
  @Nullable
  public static Object scanRelay(Attr<?> key, @Nullable Subscription upstream, CoreSubscriber<?> actual,
      boolean ended) {
    if (key == Attr.PARENT) {
      return upstream;
    }
    if (key == Attr.ACTUAL) {
      return actual;
    }
    if (key == Attr.TERMINATED || key == Attr.CANCELLED) {
      return ended;
    }
    return key == Attr.RUN_STYLE ? Attr.RunStyle.SYNC : null;
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
