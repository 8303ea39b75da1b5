package io.breakwater.internal.breaker;

import io.breakwater.testing.WhiteboxProbeSubscriber;
import io.breakwater.breaker.CircuitBreaker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;
import io.breakwater.testing.TckEnvironment;
import reactor.core.CoreSubscriber;
import reactor.core.scheduler.Schedulers;

/** The Reactive Streams TCK's whitebox rules for the breaker's hand-written subscriber. */
public class GuardSubscriberTckTest extends SubscriberWhiteboxVerification<Integer> {

  private final GuardOperator<Integer> guard = GuardOperator.of(CircuitBreaker.builder("tck")
      .meterRegistry(new SimpleMeterRegistry()).build());

  public GuardSubscriberTckTest() {
    super(TckEnvironment.forLoadedMachine());
  }

  @Override
  public Subscriber<Integer> createSubscriber(WhiteboxSubscriberProbe<Integer> probe) {
    Phase admitted = guard.tool.acquire(Schedulers.parallel());
    CoreSubscriber<Integer> downstream = new WhiteboxProbeSubscriber<>(probe);
    return new GuardSubscriber<>(downstream, guard, Schedulers.parallel(), null, admitted, false, 0);
  }

  @Override
  public Integer createElement(int element) {
    return element;
  }
}
