package io.breakwater.internal.limit;

import io.breakwater.internal.Lift;
import io.breakwater.limit.ConcurrencyLimit;
import java.util.Objects;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;

/** {@code limitedBy}: each subscription runs through the limit's permits. A {@code Mono} stays a {@code Mono}. */
public final class LimitOperator<T> implements Function<Publisher<T>, Publisher<T>>, Lift.OnSubscribe<T> {

  private final ConcurrencyEngine engine;

  private LimitOperator(ConcurrencyEngine engine) {
    this.engine = engine;
  }

  public static <T> LimitOperator<T> of(ConcurrencyLimit limit) {
    Objects.requireNonNull(limit, "limit");
    if (!(limit instanceof ConcurrencyEngine engine)) {
      throw new IllegalArgumentException("limitedBy needs a limit built by ConcurrencyLimit.builder(..) or "
          + "RedisConcurrencyLimit, not a " + limit.getClass().getName());
    }
    return new LimitOperator<>(engine);
  }

  @Override
  public Publisher<T> apply(Publisher<T> source) {
    return Lift.apply(source, "limitedBy", this);
  }

  @Override
  public void subscribe(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono) {
    engine.subscribe(source, actual, mono);
  }
}
