package io.breakwater.internal.deadline;

import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.internal.ContextKeys;
import java.time.Duration;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoOperator;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * {@code withDeadline}: a {@code Mono} stays a {@code Mono}, anything else becomes a {@code Flux}. All state is made
 * at subscription; the function itself is stateless and can be shared.
 */
public final class DeadlineOperator<T> implements Function<Publisher<T>, Publisher<T>> {

  private final DeadlineSpec spec;

  public DeadlineOperator(DeadlineSpec spec) {
    this.spec = spec;
  }

  @Override
  public Publisher<T> apply(Publisher<T> source) {
    if (source instanceof Mono<T> mono) {
      return new MonoDeadline<>(mono, spec);
    }
    return new FluxDeadline<>(Flux.from(source), spec);
  }

  /**
   * Subscribes {@code source} under the tighter of {@code spec} and the deadline already in force. When the outer
   * deadline is the tighter one, the outer operator enforces it and this one adds nothing: no timer, no wrapper.
   */
  static <T> void subscribe(Publisher<? extends T> source, DeadlineSpec spec, CoreSubscriber<? super T> actual) {
    Deadline outer = actual.currentContext().getOrDefault(ContextKeys.DEADLINE, null);
    if (outer != null) {
      long outerRemaining = outer.remainingNanos();
      if (outerRemaining <= 0) {
        Operators.error(actual, outer.exceeded());
        return;
      }
      if (outerRemaining <= spec.budget().toNanos()) {
        source.subscribe(actual);
        return;
      }
    }
    if (spec.budget().isZero()) {
      Operators.error(actual, new DeadlineExceededException(spec.name(), Duration.ZERO, Duration.ZERO));
      return;
    }
    Scheduler scheduler = spec.scheduler().get();
    Deadline deadline = Deadline.start(spec, scheduler);
    DeadlineSubscriber<T> subscriber = new DeadlineSubscriber<>(actual, deadline);
    if (Hooks.isAutomaticContextPropagationEnabled()) {
      // Reactor restores thread-locals only where contextWrite changes the Context, so go through it: blocking code
      // upstream (e.g. on boundedElastic) then sees the deadline through Deadline.current().
      Flux.from(source).contextWrite(Context.of(ContextKeys.DEADLINE, deadline)).subscribe(subscriber);
    } else {
      source.subscribe(subscriber);
    }
  }

  static final class MonoDeadline<T> extends MonoOperator<T, T> {
    private final DeadlineSpec spec;

    MonoDeadline(Mono<? extends T> source, DeadlineSpec spec) {
      super(source);
      this.spec = spec;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
      DeadlineOperator.subscribe(source, spec, actual);
    }
  }

  static final class FluxDeadline<T> extends FluxOperator<T, T> {
    private final DeadlineSpec spec;

    FluxDeadline(Flux<? extends T> source, DeadlineSpec spec) {
      super(source);
      this.spec = spec;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
      DeadlineOperator.subscribe(source, spec, actual);
    }
  }
}
