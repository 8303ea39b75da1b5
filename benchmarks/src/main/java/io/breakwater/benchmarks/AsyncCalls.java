package io.breakwater.benchmarks;

import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

/**
 * Asynchronous calls for benchmarks: a call answers long after it was subscribed, as tool and LLM calls do, so every
 * timeout arms a real timer and every breaker times a real call. {@link #source()} is a {@code Mono} whose every
 * subscription is a new pending call; {@link #next} answers the oldest pending call (one item, then completion) and
 * subscribes a new one in its place, so that {@code inFlight} calls are always pending. One operation of a benchmark
 * is one {@link #next}: one call answered and one subscribed.
 *
 * <p>One instance per benchmark thread ({@code Scope.Thread}): nothing here is thread-safe, and nothing needs to be,
 * since the benchmark thread both subscribes and answers (a timer thread never fires: calls live for milliseconds,
 * timeouts are seconds).
 */
public final class AsyncCalls {

  private final Call[] pending;
  private final Mono<Integer> source = new Source();
  private int oldest;
  private Call subscribed;
  private Mono<Integer> call;
  private CoreSubscriber<? super Integer> subscriber;

  public AsyncCalls(int inFlight) {
    if (inFlight < 1) {
      throw new IllegalArgumentException("inFlight is " + inFlight + ": at least one call must be in flight");
    }
    this.pending = new Call[inFlight];
  }

  /** A call that answers 42 when {@link #next} reaches it. */
  public Mono<Integer> source() {
    return source;
  }

  /**
   * Subscribes {@code inFlight} calls through {@code call} (which must subscribe {@link #source()} once per
   * subscription) with {@code subscriber}; {@link #next} subscribes the same way.
   */
  public void start(Mono<Integer> call, CoreSubscriber<? super Integer> subscriber) {
    this.call = call;
    this.subscriber = subscriber;
    for (int i = 0; i < pending.length; i++) {
      pending[i] = subscribe();
    }
    oldest = 0;
  }

  /** Answers the oldest pending call and subscribes a new one in its place. */
  public void next() {
    int i = oldest;
    pending[i].answer();
    pending[i] = subscribe();
    oldest = i + 1 == pending.length ? 0 : i + 1;
  }

  /** Answers every pending call. */
  public void drain() {
    for (int i = 0; i < pending.length; i++) {
      if (pending[i] != null) {
        pending[i].answer();
        pending[i] = null;
      }
    }
  }

  private Call subscribe() {
    call.subscribe(subscriber);
    Call c = subscribed;
    if (c == null) {
      throw new IllegalStateException("the benchmarked call did not subscribe to AsyncCalls.source()");
    }
    subscribed = null;
    return c;
  }

  private final class Source extends Mono<Integer> {
    @Override
    public void subscribe(CoreSubscriber<? super Integer> actual) {
      Call c = new Call(actual);
      subscribed = c;
      actual.onSubscribe(c);
    }
  }

  /** One pending call: emits its answer once it has been both requested and answered, unless cancelled. */
  private static final class Call implements Subscription {
    private final CoreSubscriber<? super Integer> actual;
    private boolean requested;
    private boolean answered;
    private boolean done;

    Call(CoreSubscriber<? super Integer> actual) {
      this.actual = actual;
    }

    void answer() {
      answered = true;
      emitIfReady();
    }

    @Override
    public void request(long n) {
      if (n > 0) {
        requested = true;
        emitIfReady();
      }
    }

    @Override
    public void cancel() {
      done = true;
    }

    private void emitIfReady() {
      if (requested && answered && !done) {
        done = true;
        actual.onNext(42);
        actual.onComplete();
      }
    }
  }
}
