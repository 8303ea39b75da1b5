package io.breakwater.internal.deadline;

import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.deadline.DeadlineSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.Scannable;
import reactor.core.Scannable.Attr;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * What Reactor's scans (its debug tooling, Micrometer's observation) read from a deadline's subscriber in flight:
 * its name, upstream and downstream, that it runs synchronously, and whether the call is over.
 */
class DeadlineSubscriberScanTest {

  private static DeadlineSpec on(VirtualTimeScheduler clock, Duration budget) {
    return DeadlineSpec.builder(budget).name("plan-trip").scheduler(() -> clock).build();
  }

  @Test
  void aDeadlineInFlightReportsItsNameItsNeighboursAndThatItIsNotOver() {
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    Subscription upstream = Operators.emptySubscription();
    AtomicReference<Subscriber<? super Integer>> seen = new AtomicReference<>();
    List<Throwable> errors = new ArrayList<>();
    BaseSubscriber<Integer> downstream = new BaseSubscriber<>() {
      @Override
      protected void hookOnError(Throwable e) {
        errors.add(e);
      }
    };
    Flux.<Integer>from(s -> {
          seen.set(s);
          s.onSubscribe(upstream);
        })
        .transformDeferred(withDeadline(on(virtual, Duration.ofSeconds(1))))
        .subscribe(downstream);

    Scannable deadline = Scannable.from(seen.get());
    assertThat(deadline.name()).isEqualTo("withDeadline(plan-trip)");
    assertThat(deadline.scanUnsafe(Attr.PARENT)).isSameAs(upstream);
    assertThat(deadline.scanUnsafe(Attr.ACTUAL)).isSameAs(downstream);
    assertThat(deadline.scan(Attr.RUN_STYLE)).isEqualTo(Attr.RunStyle.SYNC);
    assertThat(deadline.scan(Attr.TERMINATED)).isFalse();
    assertThat(deadline.scan(Attr.CANCELLED)).isFalse();
    assertThat(deadline.scan(Attr.PREFETCH)).as("not an attribute of a deadline: the default").isZero();

    virtual.advanceTimeBy(Duration.ofSeconds(1));
    assertThat(errors).singleElement().isInstanceOf(DeadlineExceededException.class);
    assertThat(deadline.scan(Attr.TERMINATED)).isTrue();
    assertThat(deadline.scan(Attr.CANCELLED)).isTrue();
  }

  @Test
  void aDeadlineThatPassesWhileAnItemIsDeliveredReportsTheCallOverAtOnce() {
    // The timer fires while the item is in onNext: the error waits for onNext to return, but the call is over.
    VirtualTimeScheduler virtual = VirtualTimeScheduler.create();
    AtomicReference<Subscriber<? super Integer>> seen = new AtomicReference<>();
    List<Object> reported = new ArrayList<>();
    Flux.<Integer>from(s -> {
          seen.set(s);
          s.onSubscribe(Operators.emptySubscription());
        })
        .transformDeferred(withDeadline(on(virtual, Duration.ofSeconds(1))))
        .subscribe(v -> {
          virtual.advanceTimeBy(Duration.ofSeconds(1));
          reported.add(Scannable.from(seen.get()).scan(Attr.TERMINATED));
        }, reported::add);

    seen.get().onNext(1);
    assertThat(reported).hasSize(2);
    assertThat(reported.get(0)).isEqualTo(true);
    assertThat(reported.get(1)).isInstanceOf(DeadlineExceededException.class);
  }

  @Test
  void theContextUpstreamOfADeadlineNamesItsTimerKeyWhenPrinted() {
    String printed = Mono.deferContextual(ctx -> Mono.just(ctx.toString()))
        .transformDeferred(withDeadline(on(VirtualTimeScheduler.create(), Duration.ofSeconds(1))))
        .block(Duration.ofSeconds(5));
    assertThat(printed).contains("breakwater.deadlineTimer=");
  }
}
