package io.breakwater;

import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.streamTimeouts;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.chaos.Chaos;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.StreamTimeouts;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * A wait of "forever" (a duration that saturates at {@code Long.MAX_VALUE} nanoseconds) on a virtual clock that stands
 * where Reactor's default clock does, about 1.8 × 10¹⁸ ns after 1970: the scheduler adds the delay to its clock
 * without saturating, so the sum wraps round into the past and the task would run at once. Every timer armed from a
 * duration that comes from outside is capped (at 2⁶¹ ns, about 73 years), so that forever stays far away.
 */
class FarDelaysOnAVirtualClockTest {

  private static final Duration FOREVER = ChronoUnit.FOREVER.getDuration();

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

  @BeforeEach
  void standWhereReactorsDefaultClockStands() {
    clock.advanceTimeBy(Duration.ofDays(56 * 365));
  }

  @AfterEach
  void stop() {
    clock.dispose();
  }

  @Test
  void aStreamWithAFirstItemTimeoutOfForeverWaitsForItsFirstItem() {
    List<Object> signals = new ArrayList<>();
    Flux.never().transformDeferred(streamTimeouts(StreamTimeouts.builder().firstItem(FOREVER).scheduler(() -> clock)
        .build())).subscribe(signals::add, signals::add);
    clock.advanceTimeBy(Duration.ofDays(1));
    assertThat(signals).isEmpty();
  }

  @Test
  void aCallQueuedWithAMaxWaitOfForeverKeepsWaiting() {
    ConcurrencyLimit one = ConcurrencyLimit.builder("crm").fixed(1).maxWait(FOREVER).scheduler(() -> clock).build();
    Mono.never().transformDeferred(limitedBy(one)).subscribe();
    List<Object> signals = new ArrayList<>();
    Mono.just(1).transformDeferred(limitedBy(one)).subscribe(signals::add, signals::add);
    clock.advanceTimeBy(Duration.ofDays(1));
    assertThat(signals).as("still queued behind the call in flight").isEmpty();
    assertThat(one.queued()).isEqualTo(1);
  }

  @Test
  void aRetryAfterABackoffOfForeverDoesNotComeAtOnce() {
    AtomicInteger attempts = new AtomicInteger();
    Mono.defer(() -> {
          attempts.incrementAndGet();
          return Mono.error(new HttpStatusException(503));
        })
        .transformDeferred(retryWithBudget(RetryPolicy.builder().backoff(Backoff.fixed(FOREVER))
            .scheduler(() -> clock).build()))
        .subscribe(v -> { }, e -> { });
    clock.advanceTimeBy(Duration.ofDays(1));
    assertThat(attempts).hasValue(1);
  }

  @Test
  void aLatencyOfForeverHoldsTheCallAndHeartbeatsEveryForeverNeverCome() {
    List<Object> signals = new ArrayList<>();
    Mono.just("slow").transformDeferred(Chaos.inject(Chaos.<String>latency(FOREVER).scheduler(() -> clock)))
        .subscribe(signals::add, signals::add);
    Flux.<String>never().transformDeferred(Chaos.inject(Chaos.<String>heartbeatsOnly(() -> ":", FOREVER)
            .scheduler(() -> clock)))
        .subscribe(signals::add, signals::add);
    clock.advanceTimeBy(Duration.ofDays(1));
    assertThat(signals).isEmpty();
  }

  @Test
  void aStoreCallBoundOfForeverLetsTheCallAnswer() {
    Sinks.One<String> answer = Sinks.one();
    List<Object> signals = new ArrayList<>();
    io.breakwater.internal.StoreCallBound.within(answer.asMono(), FOREVER, clock).subscribe(signals::add, signals::add);
    clock.advanceTimeBy(Duration.ofDays(1));
    answer.tryEmitValue("stored");
    assertThat(signals).containsExactly("stored");
  }
}
