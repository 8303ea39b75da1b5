package io.breakwater.internal.stream;

import io.breakwater.stream.StreamTimeouts;
import io.breakwater.testing.WhiteboxProbeSubscriber;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;
import io.breakwater.testing.TckEnvironment;
import reactor.core.scheduler.Schedulers;

/** The Reactive Streams TCK's whitebox rules for the stream timeouts' hand-written subscriber. */
public class StreamTimeoutSubscriberTckTest extends SubscriberWhiteboxVerification<Integer> {

  private final StreamTimeouts timeouts = StreamTimeouts.builder()
      .firstItem(Duration.ofMinutes(10))
      .idle(Duration.ofMinutes(10))
      .meterRegistry(new SimpleMeterRegistry())
      .build();

  public StreamTimeoutSubscriberTckTest() {
    super(TckEnvironment.forLoadedMachine());
  }

  @Override
  public Subscriber<Integer> createSubscriber(WhiteboxSubscriberProbe<Integer> probe) {
    return new StreamTimeoutSubscriber<>(new WhiteboxProbeSubscriber<>(probe), null, Schedulers.parallel(),
        Duration.ofMinutes(10).toNanos(), Duration.ofMinutes(10).toNanos(), timeouts);
  }

  @Override
  public Integer createElement(int element) {
    return element;
  }
}
