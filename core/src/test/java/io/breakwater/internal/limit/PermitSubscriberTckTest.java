package io.breakwater.internal.limit;

import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.testing.WhiteboxProbeSubscriber;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;
import org.reactivestreams.tck.TestEnvironment;

/** The Reactive Streams TCK's whitebox rules for the subscriber of a call that holds a concurrency permit. */
public class PermitSubscriberTckTest extends SubscriberWhiteboxVerification<Integer> {

  private final LocalPermits fixed = permits(ConcurrencyLimit.fixed(1_000_000));
  private final LocalPermits adaptive = permits(ConcurrencyLimit.adaptive());
  private int created;

  public PermitSubscriberTckTest() {
    super(new TestEnvironment(1_000));   // generous: the build machine is shared and often loaded
  }

  private static LocalPermits permits(ConcurrencyLimit limit) {
    return new LocalPermits(((ConcurrencyEngine) limit).settings(), () -> {});
  }

  @Override
  public Subscriber<Integer> createSubscriber(WhiteboxSubscriberProbe<Integer> probe) {
    // every other one for the adaptive limit, a Flux's then a Mono's
    int n = created++;
    if (n % 2 == 0) {
      return new PermitSubscriber<>(new WhiteboxProbeSubscriber<>(probe), fixed, false);
    }
    return new AdaptivePermitSubscriber<>(new WhiteboxProbeSubscriber<>(probe), adaptive, n % 4 == 3);
  }

  @Override
  public Integer createElement(int element) {
    return element;
  }
}
