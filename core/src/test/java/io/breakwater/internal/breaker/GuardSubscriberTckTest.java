package io.breakwater.internal.breaker;

import io.breakwater.breaker.CircuitBreaker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.CoreSubscriber;
import reactor.core.scheduler.Schedulers;

/** The Reactive Streams TCK's whitebox rules for the breaker's hand-written subscriber. */
public class GuardSubscriberTckTest extends SubscriberWhiteboxVerification<Integer> {

  private final GuardOperator<Integer> guard = GuardOperator.of(CircuitBreaker.builder("tck")
      .meterRegistry(new SimpleMeterRegistry()).build());

  public GuardSubscriberTckTest() {
    super(new TestEnvironment());
  }

  @Override
  public Subscriber<Integer> createSubscriber(WhiteboxSubscriberProbe<Integer> probe) {
    Phase admitted = guard.tool.acquire(Schedulers.parallel());
    CoreSubscriber<Integer> downstream = new CoreSubscriber<>() {
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
      public void onNext(Integer value) {
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
    };
    return new GuardSubscriber<>(downstream, guard, Schedulers.parallel(), null, admitted, false, 0);
  }

  @Override
  public Integer createElement(int element) {
    return element;
  }
}
