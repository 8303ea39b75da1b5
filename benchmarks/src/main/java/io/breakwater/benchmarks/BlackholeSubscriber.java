package io.breakwater.benchmarks;

import org.openjdk.jmh.infra.Blackhole;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

/**
 * The cheapest way to subscribe in a benchmark: requests everything and hands every signal to the blackhole. One
 * per benchmark thread, reused for every call (a subscriber may be subscribed again once terminated).
 */
public final class BlackholeSubscriber<T> implements CoreSubscriber<T> {

  private final Blackhole blackhole;

  public BlackholeSubscriber(Blackhole blackhole) {
    this.blackhole = blackhole;
  }

  @Override
  public void onSubscribe(Subscription s) {
    s.request(Long.MAX_VALUE);
  }

  @Override
  public void onNext(T t) {
    blackhole.consume(t);
  }

  @Override
  public void onError(Throwable t) {
    throw new IllegalStateException("A benchmarked call failed", t);
  }

  @Override
  public void onComplete() {
    blackhole.consume(true);
  }
}
