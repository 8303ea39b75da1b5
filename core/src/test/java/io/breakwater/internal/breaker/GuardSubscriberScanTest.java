package io.breakwater.internal.breaker;

import static io.breakwater.Breakwater.guardedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
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
 * What Reactor's scans (its debug tooling, Micrometer's observation) read from a breaker's subscriber in flight: its
 * name, upstream and downstream, that it runs synchronously, and whether the call is over.
 */
class GuardSubscriberScanTest {

  @Test
  void aGuardedCallInFlightReportsItsBreakerItsNeighboursAndWhetherItIsOver() {
    CircuitBreaker breaker = CircuitBreaker.builder("search")
        .scheduler(VirtualTimeScheduler::create)
        .meterRegistry(new SimpleMeterRegistry())
        .build();
    Subscription upstream = Operators.emptySubscription();
    AtomicReference<Subscriber<? super String>> seen = new AtomicReference<>();
    BaseSubscriber<String> downstream = new BaseSubscriber<>() { };
    Flux.<String>from(s -> {
          seen.set(s);
          s.onSubscribe(upstream);
        })
        .transformDeferred(guardedBy(breaker))
        .subscribe(downstream);

    Scannable guard = Scannable.from(seen.get());
    assertThat(guard.scan(Attr.NAME)).isEqualTo("guardedBy(search)");
    assertThat(guard.scanUnsafe(Attr.PARENT)).isSameAs(upstream);
    assertThat(guard.scanUnsafe(Attr.ACTUAL)).isSameAs(downstream);
    assertThat(guard.scan(Attr.RUN_STYLE)).isEqualTo(Attr.RunStyle.SYNC);
    assertThat(guard.scan(Attr.TERMINATED)).isFalse();
    assertThat(guard.scan(Attr.CANCELLED)).isFalse();
    assertThat(guard.scan(Attr.PREFETCH)).as("not an attribute of a guard: the default").isZero();

    downstream.cancel();
    assertThat(guard.scan(Attr.TERMINATED)).isTrue();
    assertThat(guard.scan(Attr.CANCELLED)).isTrue();
  }
}
