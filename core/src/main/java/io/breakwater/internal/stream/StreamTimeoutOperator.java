package io.breakwater.internal.stream;

import io.breakwater.deadline.Deadline;
import io.breakwater.internal.ContextKeys;
import io.breakwater.stream.StreamTimeouts;
import java.util.function.Function;
import java.util.function.Predicate;
import io.breakwater.internal.Lift;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * {@code idleTimeout}, {@code firstItemTimeout} and {@code streamTimeouts}: a {@code Mono} stays a {@code Mono}. The
 * function is immutable; the timeouts, the scheduler and the subscriber are resolved at subscription.
 */
public final class StreamTimeoutOperator<T> implements Function<Publisher<T>, Publisher<T>>, Lift.OnSubscribe<T> {

  private final StreamTimeouts timeouts;
  @Nullable private final Predicate<? super T> isProgress;

  public StreamTimeoutOperator(StreamTimeouts timeouts, @Nullable Predicate<? super T> isProgress) {
    this.timeouts = timeouts;
    this.isProgress = isProgress;
  }

  @Override
  public Publisher<T> apply(Publisher<T> source) {
    return Lift.apply(source, "streamTimeouts", this);
  }

  @Override
  public void subscribe(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono) {
    Deadline deadline = actual.currentContext().getOrDefault(ContextKeys.DEADLINE, null);
    Scheduler scheduler = timeouts.scheduler() != null ? timeouts.scheduler().get()
        : deadline != null ? deadline.scheduler() : Schedulers.parallel();
    StreamTimeoutSubscriber<T> subscriber = new StreamTimeoutSubscriber<>(actual, isProgress, scheduler,
        timeouts.firstItemNanos(deadline), timeouts.idleNanos(deadline), timeouts);
    source.subscribe(subscriber);
    subscriber.sourceReturned();
  }
}
