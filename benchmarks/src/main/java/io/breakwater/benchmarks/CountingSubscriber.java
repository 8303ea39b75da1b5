package io.breakwater.benchmarks;

import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

/**
 * A subscriber for the interleaved cross-checks (no JMH blackhole there): requests everything and adds what it sees
 * to a field of its own, so that the JIT keeps the work that feeds it and two threads with one subscriber each share
 * no written field but the operator's. Reused for every call (a subscriber may be subscribed again once terminated).
 */
public final class CountingSubscriber implements CoreSubscriber<Integer> {

  // written, never read: it keeps the JIT from dropping the work that feeds it
  @SuppressWarnings("UnusedVariable")
  private long sink;

  @Override
  public void onSubscribe(Subscription s) {
    s.request(Long.MAX_VALUE);
  }

  @Override
  public void onNext(Integer value) {
    sink += value;
  }

  @Override
  public void onError(Throwable t) {
    sink++;
  }

  @Override
  public void onComplete() {
    sink++;
  }
}
