package io.breakwater.internal.hedge;

import io.breakwater.hedge.HedgePolicy;
import io.breakwater.testing.TckEnvironment;
import io.breakwater.testing.WhiteboxProbeSubscriber;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * The Reactive Streams TCK's whitebox rules for the subscriber of a hedged call's attempt (the primary of a stream
 * call, whose first item wins the race and whose items then flow through).
 */
public class HedgeSubscriberTckTest extends SubscriberWhiteboxVerification<Integer> {

  private final HedgePolicy policy = HedgePolicy.builder().name("tck").delay(Duration.ofMinutes(10))
      .meterRegistry(new SimpleMeterRegistry()).build();

  public HedgeSubscriberTckTest() {
    super(TckEnvironment.forLoadedMachine());
  }

  @Override
  public Subscriber<Integer> createSubscriber(WhiteboxSubscriberProbe<Integer> probe) {
    WhiteboxProbeSubscriber<Integer> actual = new WhiteboxProbeSubscriber<>(probe);
    HedgeSubscriber<Integer> call = new HedgeSubscriber<>(actual, HedgeOperator.of(policy, null, List.of()),
        Flux.never(), Schedulers.parallel(), -1, false);
    actual.onSubscribe(call);
    return call.primary;
  }

  @Override
  public Integer createElement(int element) {
    return element;
  }
}
