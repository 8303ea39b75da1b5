package io.breakwater.limit;

import static io.breakwater.Breakwater.limitedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.HttpStatusException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.publisher.TestPublisher;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The adaptive limit against a dependency whose latency stays flat up to a knee and then grows with the calls in
 * flight (a server with {@code knee} workers), driven in virtual time by 100 callers that call again as soon as they
 * have an answer.
 */
class AdaptiveLimitTest {

  /** A server with {@code knee} workers: each call takes {@code base}, or longer when more calls share them. */
  private static final class Server {
    final VirtualTimeScheduler clock;
    final AtomicInteger inFlight = new AtomicInteger();
    volatile Duration base = Duration.ofMillis(100);
    volatile int knee = 20;
    volatile boolean failing;

    Server(VirtualTimeScheduler clock) {
      this.clock = clock;
    }

    Mono<String> call() {
      return Mono.defer(() -> {
        if (failing) {
          return Mono.delay(base, clock).then(Mono.error(new HttpStatusException(503)));
        }
        int c = inFlight.incrementAndGet();
        long latency = (long) (base.toNanos() * Math.max(1.0, (double) c / knee));
        return Mono.delay(Duration.ofNanos(latency), clock).thenReturn("ok")
            .doOnTerminate(inFlight::decrementAndGet)
            .doOnCancel(inFlight::decrementAndGet);
      });
    }
  }

  private static double median(List<Integer> samples) {
    List<Integer> sorted = new ArrayList<>(samples);
    sorted.sort(null);
    return sorted.get(sorted.size() / 2);
  }

  /** The limit once a second for {@code seconds}; the median of the last {@code tail} of them. */
  private static double run(VirtualTimeScheduler clock, ConcurrencyLimit limit, int seconds, int tail,
      List<Integer> trace) {
    List<Integer> samples = new ArrayList<>();
    for (int s = 0; s < seconds; s++) {
      clock.advanceTimeBy(Duration.ofSeconds(1));
      samples.add(limit.limit());
    }
    trace.addAll(samples);
    return median(samples.subList(seconds - tail, seconds));
  }

  @Test
  void settlesWithinTwentyPercentOfTheKneeAndRecoversAfterTheDependencySlowsAndHeals() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    try {
      Server server = new Server(clock);
      ConcurrencyLimit limit = ConcurrencyLimit.builder("server").adaptive(5, 1, 200)
          .maxWait(Duration.ofSeconds(10)).scheduler(() -> clock).build();
      Mono<String> call = server.call().transformDeferred(limitedBy(limit))
          .onErrorResume(LimitExceededException.class, e -> Mono.delay(Duration.ofMillis(10), clock).thenReturn("x"));
      Flux.range(0, 100).flatMap(i -> call.repeat(), 100).subscribe();
      List<Integer> trace = new ArrayList<>();

      double healthy = run(clock, limit, 240, 120, trace);

      server.base = Duration.ofMillis(400);   // slower, and half the workers
      server.knee = 10;
      double slow = run(clock, limit, 240, 120, trace);

      server.base = Duration.ofMillis(100);   // healed
      server.knee = 20;
      double healed = run(clock, limit, 240, 120, trace);

      System.out.printf("adaptive limit, knee 20 → 10 → 20: median of the last 2 minutes of each 4-minute phase "
          + "%.0f, %.0f, %.0f; trace every 10 s %s%n", healthy, slow, healed, every(trace, 10));
      assertThat(healthy).as("settled near the knee of 20").isBetween(16.0, 24.0);
      assertThat(slow).as("settled near the slowed server's knee of 10").isBetween(8.0, 12.0);
      assertThat(healed).as("recovered to the knee of 20").isBetween(16.0, 24.0);
    } finally {
      clock.dispose();
    }
  }

  @Test
  void dropsCutTheLimit() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    try {
      Server server = new Server(clock);
      ConcurrencyLimit limit = ConcurrencyLimit.builder("server").adaptive(40, 1, 200)
          .scheduler(() -> clock).build();
      Mono<String> call = server.call().transformDeferred(limitedBy(limit)).onErrorReturn("failed");
      Flux.range(0, 100).flatMap(i -> call.repeat(), 100).subscribe();
      clock.advanceTimeBy(Duration.ofSeconds(1));
      int before = limit.limit();
      server.failing = true;
      clock.advanceTimeBy(Duration.ofSeconds(1));
      assertThat(limit.limit()).as("503s are drops: each window cuts the limit by 10 %%").isLessThan(before / 2);
      assertThat(limit.limit()).isGreaterThanOrEqualTo(1);
    } finally {
      clock.dispose();
    }
  }

  @Test
  void clientErrorsAreNotDropsAndLeaveTheLimitAlone() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    try {
      ConcurrencyLimit limit = ConcurrencyLimit.builder("api").adaptive(10, 1, 200).scheduler(() -> clock).build();
      for (int i = 0; i < 10; i++) {
        Mono.error(new HttpStatusException(400)).transformDeferred(limitedBy(limit)).subscribe(v -> {}, e -> {});
      }
      assertThat(limit.limit()).as("a window of 400s, one call in flight at a time").isEqualTo(10);
      for (int i = 0; i < 10; i++) {
        Mono.error(new HttpStatusException(503)).transformDeferred(limitedBy(limit)).subscribe(v -> {}, e -> {});
      }
      assertThat(limit.limit()).as("a window of 503s: 10 %% off").isEqualTo(9);
    } finally {
      clock.dispose();
    }
  }

  @Test
  void anAdaptiveLimitPassesValuesOnAndEveryCallGivesItsPermitBackWhenItEnds() {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("api").adaptive(4, 1, 10).build();
    TestPublisher<String> stream = TestPublisher.create();
    List<String> seen = new ArrayList<>();
    AtomicInteger completed = new AtomicInteger();
    stream.flux().transformDeferred(limitedBy(limit)).subscribe(seen::add, e -> {}, completed::incrementAndGet);
    stream.next("a");
    assertThat(seen).containsExactly("a");
    assertThat(limit.inFlight()).as("a stream holds its permit until it ends").isEqualTo(1);
    stream.next("b").complete();
    assertThat(seen).containsExactly("a", "b");
    assertThat(completed).hasValue(1);
    assertThat(limit.inFlight()).isZero();

    TestPublisher<String> failing = TestPublisher.create();
    failing.flux().transformDeferred(limitedBy(limit)).subscribe(v -> {}, e -> {});
    failing.next("x").error(new IllegalStateException("reset"));
    assertThat(limit.inFlight()).isZero();

    Mono.empty().transformDeferred(limitedBy(limit)).subscribe(v -> {}, e -> {}, completed::incrementAndGet);
    assertThat(completed).hasValue(2);
    assertThat(Mono.just("v").transformDeferred(limitedBy(limit)).block()).isEqualTo("v");
    assertThat(limit.inFlight()).isZero();
  }

  private static List<Integer> every(List<Integer> trace, int step) {
    List<Integer> picked = new ArrayList<>();
    for (int i = step - 1; i < trace.size(); i += step) {
      picked.add(trace.get(i));
    }
    return picked;
  }
}
