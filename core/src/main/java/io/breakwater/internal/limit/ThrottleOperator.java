package io.breakwater.internal.limit;

import io.breakwater.internal.Lift;
import io.breakwater.limit.CallWeight;
import io.breakwater.limit.RateLimit;
import java.util.Objects;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;

/** {@code throttledBy}: each subscription takes the permits of its weight first. A {@code Mono} stays a {@code Mono}. */
public final class ThrottleOperator<T> implements Function<Publisher<T>, Publisher<T>>, Lift.OnSubscribe<T> {

  private final RateEngine engine;
  private final CallWeight<? super T> weight;

  private ThrottleOperator(RateEngine engine, CallWeight<? super T> weight) {
    this.engine = engine;
    this.weight = weight;
  }

  public static <T> ThrottleOperator<T> of(RateLimit limit, CallWeight<? super T> weight) {
    Objects.requireNonNull(limit, "limit");
    Objects.requireNonNull(weight, "weight");
    if (!(limit instanceof RateEngine engine)) {
      throw new IllegalArgumentException("throttledBy needs a limit built by RateLimit.builder(..) or "
          + "RedisRateLimit, not a " + limit.getClass().getName());
    }
    return new ThrottleOperator<>(engine, weight);
  }

  @Override
  public Publisher<T> apply(Publisher<T> source) {
    return Lift.apply(source, "throttledBy", this);
  }

  @Override
  public void subscribe(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono) {
    engine.subscribe(source, actual, mono, weight);
  }
}
