package io.breakwater.testing;

import org.reactivestreams.Subscription;
import org.reactivestreams.tck.SubscriberWhiteboxVerification.SubscriberPuppet;
import org.reactivestreams.tck.SubscriberWhiteboxVerification.WhiteboxSubscriberProbe;
import reactor.core.CoreSubscriber;

/**
 * The downstream of a hand-written subscriber under the Reactive Streams TCK's whitebox verification: it reports every
 * signal to the TCK's probe and lets the TCK request and cancel through it.
 */
public final class WhiteboxProbeSubscriber<T> implements CoreSubscriber<T> {

  private final WhiteboxSubscriberProbe<T> probe;

  public WhiteboxProbeSubscriber(WhiteboxSubscriberProbe<T> probe) {
    this.probe = probe;
  }

  @Override
  public void onSubscribe(Subscription s) {
    probe.registerOnSubscribe(new SubscriberPuppet() {
      @Override
      public void triggerRequest(long elements) {
        s.request(elements);
      }

      @Override
      public void signalCancel() {
        s.cancel();
      }
    });
  }

  @Override
  public void onNext(T value) {
    probe.registerOnNext(value);
  }

  @Override
  public void onError(Throwable t) {
    probe.registerOnError(t);
  }

  @Override
  public void onComplete() {
    probe.registerOnComplete();
  }
}
