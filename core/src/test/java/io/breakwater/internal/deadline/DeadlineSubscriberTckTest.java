package io.breakwater.internal.deadline;

import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.testing.WhiteboxProbeSubscriber;
import java.time.Duration;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;
import io.breakwater.testing.TckEnvironment;
import reactor.core.scheduler.Schedulers;

/** The Reactive Streams TCK's whitebox rules for the deadline's hand-written subscriber. */
public class DeadlineSubscriberTckTest extends SubscriberWhiteboxVerification<Integer> {

  public DeadlineSubscriberTckTest() {
    super(TckEnvironment.forLoadedMachine());
  }

  @Override
  public Subscriber<Integer> createSubscriber(WhiteboxSubscriberProbe<Integer> probe) {
    Deadline deadline = Deadline.start(DeadlineSpec.of(Duration.ofMinutes(10)), Schedulers.parallel());
    return new DeadlineSubscriber<>(new WhiteboxProbeSubscriber<>(probe), deadline);
  }

  @Override
  public Integer createElement(int element) {
    return element;
  }
}
