package io.breakwater.stress;

import static io.breakwater.Breakwater.streamTimeouts;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.stream.StreamTimeouts;
import io.breakwater.testing.TaskCountingScheduler;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * P8: 10 000 concurrent streams with progress timers on a real 2-thread scheduler. Breakwater's heap per stream
 * (measured against the same streams without the operator) stays under 2 KiB, and cancelling them leaves no scheduled
 * task behind.
 */
class TenThousandStreamsTest {

  private static final int STREAMS = 10_000;
  private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

  @Test
  void tenThousandIdleTimedStreamsCostUnderTwoKibEachAndLeaveNoTaskAfterCancellation() throws InterruptedException {
    Scheduler threads = Schedulers.newParallel("stress", 2);
    TaskCountingScheduler counting = new TaskCountingScheduler(threads);
    try {
      StreamTimeouts timeouts = StreamTimeouts.builder()
          .firstItem(Duration.ofMinutes(10))
          .idle(Duration.ofMinutes(1))
          .scheduler(() -> counting)
          .build();

      long bare = heapPerStream(flux -> flux);
      long timed = heapPerStream(flux -> flux.transformDeferred(streamTimeouts(timeouts)));
      long breakwaterBytes = timed - bare;
      System.out.printf("P8: %d B of heap per stream with timers, %d B without: Breakwater's share %d B%n", timed,
          bare, breakwaterBytes);
      assertThat(breakwaterBytes).as("Breakwater's heap per stream, bytes").isLessThanOrEqualTo(2048);

      List<Disposable> streams = subscribe(flux -> flux.transformDeferred(streamTimeouts(timeouts)));
      assertThat(counting.pendingTasks()).as("one timer per stream, not one per element").isEqualTo(STREAMS);
      streams.forEach(Disposable::dispose);
      assertThat(counting.pendingTasks()).as("scheduled tasks left after cancelling every stream").isZero();
    } finally {
      threads.dispose();
    }
  }

  private static List<Disposable> subscribe(Function<Flux<String>, Flux<String>> operator) {
    List<Disposable> streams = new ArrayList<>(STREAMS);
    for (int i = 0; i < STREAMS; i++) {
      streams.add(operator.apply(Flux.never()).subscribe());
    }
    return streams;
  }

  private static long heapPerStream(Function<Flux<String>, Flux<String>> operator) throws InterruptedException {
    long before = usedHeapAfterGc();
    List<Disposable> streams = subscribe(operator);
    long after = usedHeapAfterGc();
    streams.forEach(Disposable::dispose);
    return (after - before) / STREAMS;
  }

  private static long usedHeapAfterGc() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(50);
    }
    return MEMORY.getHeapMemoryUsage().getUsed();
  }
}
