package io.breakwater.internal.hedge;

import static io.breakwater.Breakwater.hedgedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.hedge.HedgePolicy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.Scannable;
import reactor.core.Scannable.Attr;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * What Reactor's scans (its debug tooling, Micrometer's observation) read from a hedged call in flight: the call's
 * subscriber (its name, downstream, primary attempt, downstream demand, that it drains asynchronously, whether it is
 * cancelled or over) and each attempt's (its name and index, upstream, the call, whether it is cancelled).
 */
class HedgeSubscriberScanTest {

  private static HedgePolicy policy(VirtualTimeScheduler clock) {
    return HedgePolicy.builder().name("search").delay(Duration.ofSeconds(1)).budget(1.0)
        .scheduler(() -> clock).meterRegistry(new SimpleMeterRegistry()).build();
  }

  @Test
  void aHedgedCallInFlightReportsTheCallAndItsPrimaryAttempt() {
    Subscription upstream = Operators.emptySubscription();
    AtomicReference<Subscriber<? super String>> seen = new AtomicReference<>();
    BaseSubscriber<String> downstream = new BaseSubscriber<>() {
      @Override
      protected void hookOnSubscribe(Subscription subscription) {
        subscription.request(3);
      }
    };
    Flux.<String>from(s -> {
          seen.set(s);
          s.onSubscribe(upstream);
        })
        .transformDeferred(hedgedBy(policy(VirtualTimeScheduler.create())))
        .subscribe(downstream);

    Scannable attempt = Scannable.from(seen.get());
    assertThat(attempt.scan(Attr.NAME)).isEqualTo("hedgedBy(search)#0");
    assertThat(attempt.scanUnsafe(Attr.PARENT)).isSameAs(upstream);
    assertThat(attempt.scan(Attr.RUN_STYLE)).isEqualTo(Attr.RunStyle.SYNC);
    assertThat(attempt.scan(Attr.CANCELLED)).isFalse();
    assertThat(attempt.scan(Attr.PREFETCH)).as("not an attribute of an attempt: the default").isZero();

    Scannable call = Scannable.from(attempt.scanUnsafe(Attr.ACTUAL));
    assertThat(call.scan(Attr.NAME)).isEqualTo("hedgedBy(search)");
    assertThat(call.scanUnsafe(Attr.ACTUAL)).isSameAs(downstream);
    assertThat(call.scanUnsafe(Attr.PARENT)).isSameAs(seen.get());
    assertThat(call.scan(Attr.REQUESTED_FROM_DOWNSTREAM)).isEqualTo(3L);
    assertThat(call.scan(Attr.RUN_STYLE)).isEqualTo(Attr.RunStyle.ASYNC);
    assertThat(call.scan(Attr.CANCELLED)).isFalse();
    assertThat(call.scan(Attr.TERMINATED)).isFalse();
    assertThat(call.scan(Attr.PREFETCH)).as("not an attribute of a hedged call: the default").isZero();

    downstream.cancel();
    assertThat(call.scan(Attr.CANCELLED)).isTrue();
    assertThat(attempt.scan(Attr.CANCELLED)).isTrue();
  }

  @Test
  void aHedgedCallThatCompletedReportsItselfTerminated() {
    AtomicReference<Subscriber<? super String>> seen = new AtomicReference<>();
    BaseSubscriber<String> downstream = new BaseSubscriber<>() { };
    Flux.<String>from(s -> {
          seen.set(s);
          s.onSubscribe(Operators.emptySubscription());
        })
        .transformDeferred(hedgedBy(policy(VirtualTimeScheduler.create())))
        .subscribe(downstream);
    Scannable call = Scannable.from(Scannable.from(seen.get()).scanUnsafe(Attr.ACTUAL));

    seen.get().onNext("answer");
    seen.get().onComplete();
    assertThat(call.scan(Attr.TERMINATED)).isTrue();
    assertThat(downstream.isDisposed()).isTrue();
  }
}
