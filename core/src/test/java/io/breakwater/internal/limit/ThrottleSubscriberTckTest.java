package io.breakwater.internal.limit;

import io.breakwater.limit.CallWeight;
import io.breakwater.limit.RateLimit;
import io.breakwater.testing.TckEnvironment;
import io.breakwater.testing.WhiteboxProbeSubscriber;
import java.time.Duration;
import java.util.Map;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;

/** The Reactive Streams TCK's whitebox rules for the subscriber of a call admitted by a rate limit. */
public class ThrottleSubscriberTckTest extends SubscriberWhiteboxVerification<Integer> {

  private final RateEngine limit = (RateEngine) RateLimit.builder("tck")
      .tokens(Long.MAX_VALUE / 4, Duration.ofSeconds(1)).build();
  private final CallWeight<Integer> weight = CallWeight.<Integer>tokens(10, i -> i)
      .headers(i -> Map.of("x-ratelimit-remaining-tokens", java.util.List.of("1000000")));

  public ThrottleSubscriberTckTest() {
    super(TckEnvironment.forLoadedMachine());
  }

  @Override
  public Subscriber<Integer> createSubscriber(WhiteboxSubscriberProbe<Integer> probe) {
    return new ThrottleSubscriber<>(new WhiteboxProbeSubscriber<>(probe), limit, weight, false);
  }

  @Override
  public Integer createElement(int element) {
    return element;
  }
}
