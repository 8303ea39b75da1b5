package io.breakwater.limit;

import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.throttledBy;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.Scannable;
import reactor.core.Scannable.Attr;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.test.publisher.TestPublisher;

/**
 * What tooling (Reactor's debug mode, Micrometer's observation) reads of {@code limitedBy} and {@code throttledBy}
 * in flight through {@link Scannable}: the operator's name with its limit, its upstream and downstream, whether the
 * call has ended, and its run style.
 */
class LimitOperatorsIntrospectionTest {

  /** A downstream that keeps the subscription it was given: the operator's own subscriber. */
  private static final class Downstream extends BaseSubscriber<String> {
    final AtomicReference<Subscription> given = new AtomicReference<>();

    @Override
    protected void hookOnSubscribe(Subscription subscription) {
      given.set(subscription);
      subscription.request(Long.MAX_VALUE);
    }
  }

  private static void assertInFlightThenEnded(Flux<String> operated, TestPublisher<String> call, String name,
      boolean byCancel) {
    Downstream downstream = new Downstream();
    operated.subscribe(downstream);
    Scannable operator = Scannable.from(downstream.given.get());
    assertThat(operator.name()).isEqualTo(name);
    Object actual = operator.scanUnsafe(Attr.ACTUAL);
    Object parent = operator.scanUnsafe(Attr.PARENT);
    assertThat(actual).as("the subscriber it relays to").isNotNull().isNotSameAs(operator).isNotSameAs(parent);
    assertThat(parent).as("the call's own subscription").isNotNull().isNotSameAs(operator);
    assertThat(operator.scan(Attr.RUN_STYLE)).isEqualTo(Attr.RunStyle.SYNC);
    assertThat(operator.scan(Attr.TERMINATED)).isFalse();
    assertThat(operator.scan(Attr.CANCELLED)).isFalse();
    assertThat(operator.scanUnsafe(Attr.PREFETCH)).as("not one of its attributes").isNull();
    if (byCancel) {
      downstream.dispose();
      call.assertCancelled();
    } else {
      call.next("a").complete();
    }
    assertThat(operator.scan(Attr.TERMINATED)).isTrue();
    assertThat(operator.scan(Attr.CANCELLED)).isTrue();
  }

  @Test
  void aLimitedCallInFlightShowsItsOperatorItsNeighboursAndWhenItEnded() {
    ConcurrencyLimit search = ConcurrencyLimit.builder("search").fixed(2).maxWait(Duration.ZERO).build();
    TestPublisher<String> call = TestPublisher.create();
    assertInFlightThenEnded(call.flux().transformDeferred(limitedBy(search)), call, "limitedBy(search)", false);
    TestPublisher<String> cancelled = TestPublisher.create();
    assertInFlightThenEnded(cancelled.flux().transformDeferred(limitedBy(search)), cancelled, "limitedBy(search)",
        true);
    assertThat(search.inFlight()).isZero();
  }

  @Test
  void aThrottledCallInFlightShowsItsOperatorItsNeighboursAndWhenItEnded() {
    RateLimit openai = RateLimit.builder("openai").requests(10, Duration.ofMinutes(1)).build();
    TestPublisher<String> call = TestPublisher.create();
    assertInFlightThenEnded(call.flux().transformDeferred(throttledBy(openai)), call, "throttledBy(openai)", false);
  }

  @Test
  void anAdaptiveLimitsCallShowsTheSame() {
    ConcurrencyLimit gpu = ConcurrencyLimit.builder("gpu").adaptive(4, 1, 10).build();
    TestPublisher<String> call = TestPublisher.create();
    assertInFlightThenEnded(call.flux().transformDeferred(limitedBy(gpu)), call, "limitedBy(gpu)", false);
    assertThat(gpu.inFlight()).isZero();
  }
}
