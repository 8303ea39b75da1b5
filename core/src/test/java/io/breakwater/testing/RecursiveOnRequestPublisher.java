package io.breakwater.testing;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A publisher that emits synchronously from {@code request(n)}, recursively: a subscriber that requests more from
 * inside {@code onNext} gets the next item (and the terminal signal) nested inside that {@code onNext}, up to
 * {@code maxDepth} levels (Reactive Streams rule 3.3 allows bounded recursion), after which the outer call delivers
 * the rest. It is how a hand-written subscriber meets re-entrant signals: an item or a completion that arrives while
 * its own {@code onNext} is still on the stack.
 */
public final class RecursiveOnRequestPublisher<T> implements Publisher<T> {

  private final List<T> items;
  @Nullable private final Throwable error;
  private final int maxDepth;
  private final AtomicInteger cancellations = new AtomicInteger();
  private final AtomicInteger subscriptions = new AtomicInteger();

  /** Emits {@code items}, then completes (or fails with {@code error} if it is not null). */
  public RecursiveOnRequestPublisher(List<T> items, @Nullable Throwable error, int maxDepth) {
    this.items = List.copyOf(items);
    this.error = error;
    this.maxDepth = maxDepth;
  }

  public int cancellations() {
    return cancellations.get();
  }

  public int subscriptions() {
    return subscriptions.get();
  }

  @Override
  public void subscribe(Subscriber<? super T> s) {
    subscriptions.incrementAndGet();
    s.onSubscribe(new Recursive(s));
  }

  private final class Recursive implements Subscription {
    private final Subscriber<? super T> s;
    private long demand;
    private int next;
    private int depth;
    private boolean done;

    Recursive(Subscriber<? super T> s) {
      this.s = s;
    }

    @Override
    public void request(long n) {
      if (done) {
        return;
      }
      if (n <= 0) {
        done = true;
        s.onError(new IllegalArgumentException("§3.9: request(" + n + ")"));
        return;
      }
      demand = demand + n < 0 ? Long.MAX_VALUE : demand + n;
      if (depth >= maxDepth) {
        return;   // the caller further up the stack delivers what was just requested
      }
      depth++;
      try {
        while (!done && next < items.size() && demand > 0) {
          demand--;
          s.onNext(items.get(next++));
        }
        if (!done && next == items.size()) {
          done = true;
          if (error != null) {
            s.onError(error);
          } else {
            s.onComplete();
          }
        }
      } finally {
        depth--;
      }
    }

    @Override
    public void cancel() {
      if (!done) {
        done = true;
        cancellations.incrementAndGet();
      }
    }
  }
}
