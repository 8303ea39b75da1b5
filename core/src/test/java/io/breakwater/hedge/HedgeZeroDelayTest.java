package io.breakwater.hedge;

import static io.breakwater.Breakwater.hedgedBy;
import static io.breakwater.hedge.HedgedByTest.fill;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * With (next to) no delay, each hedge's timer fires on the scheduler's threads while the hedge before it is still
 * being started: each hedge still gets its own index, so each alternate is called once. A zero delay is refused by
 * the builder and comes only from a deadline's last nanoseconds (the delay is cut to the time left over the attempts);
 * the shortest delay a policy takes, 1 ns, races the same way.
 */
class HedgeZeroDelayTest {

  private final Scheduler threads = Schedulers.newParallel("zero-delay-hedges", 4);

  @AfterEach
  void stop() {
    threads.dispose();
  }

  @Test
  void aNanosecondDelayStartsEachHedgeWithItsOwnIndex() throws InterruptedException {
    HedgePolicy policy = HedgePolicy.builder().name("zero").delay(Duration.ofNanos(1)).maxHedges(3).budget(1.0)
        .scheduler(() -> threads).meterRegistry(new SimpleMeterRegistry()).build();
    for (int round = 0; round < 2_000; round++) {
      fill(policy, 3);
      AtomicInteger[] calls = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger()};
      CountDownLatch started = new CountDownLatch(3);
      List<Supplier<Mono<String>>> alternates = List.of(
          () -> Mono.<String>never().doOnSubscribe(s -> count(calls[0], started)),
          () -> Mono.<String>never().doOnSubscribe(s -> count(calls[1], started)),
          () -> Mono.<String>never().doOnSubscribe(s -> count(calls[2], started)));
      Disposable call = Mono.<String>never().transformDeferred(hedgedBy(policy, alternates)).subscribe();
      assertThat(started.await(10, TimeUnit.SECONDS)).as("round %d: three hedges started", round).isTrue();
      call.dispose();
      for (int i = 0; i < 3; i++) {
        assertThat(calls[i]).as("round %d: calls of alternate %d", round, i).hasValue(1);
      }
    }
  }

  private static void count(AtomicInteger calls, CountDownLatch started) {
    calls.incrementAndGet();
    started.countDown();
  }
}
