package io.breakwater.breaker;

import static io.breakwater.Breakwater.guardedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker.State;
import io.breakwater.failure.HttpStatusException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Many threads make calls with random outcomes (successes, failures, client errors, cancellations, calls that end
 * later) while the clock jumps forward. Whatever the interleaving: every transition is delivered, in an unbroken
 * chain that ends in the current state; never more than one probe is in flight; every probe claim is released.
 */
class CircuitBreakerStressTest {

  private static final int THREADS = 4;
  private static final int OPERATIONS = 20_000;

  @Test
  void randomOutcomesFromManyThreadsKeepTheInvariants() throws Exception {
    for (long seed = 1; seed <= 3; seed++) {
      run(seed);
    }
  }

  private void run(long seed) throws Exception {
    ManualClock clock = new ManualClock();
    ProbeCountingStore store = new ProbeCountingStore();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    CircuitBreaker b = CircuitBreaker.builder("stress")
        .scheduler(() -> clock)
        .meterRegistry(meters)
        .stateStore(store)
        .minimumCalls(5)
        .failureRateThreshold(0.5)
        .slidingWindow(Duration.ofMillis(100), 10)
        .openDuration(Duration.ofMillis(5))
        .openDurationGrowth(1.5, Duration.ofMillis(20))
        .rampUp(Duration.ofMillis(3), 0.3)
        .slowCall(Duration.ofMillis(2), 0.9)
        .build();
    Queue<StateTransition> transitions = new ConcurrentLinkedQueue<>();
    b.transitions().subscribe(transitions::add);

    ExecutorService threads = Executors.newFixedThreadPool(THREADS);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      SplittableRandom random = new SplittableRandom(seed * 31 + t);
      done.add(threads.submit(() -> callRandomly(b, clock, random)));
    }
    for (Future<?> f : done) {
      f.get(60, TimeUnit.SECONDS);
    }
    threads.shutdown();
    State last = b.state();

    String context = "seed " + seed;
    List<StateTransition> delivered = new ArrayList<>(transitions);
    assertThat(delivered).as(context).isNotEmpty();
    assertThat(delivered.get(0).from()).as(context).isEqualTo(State.CLOSED);
    for (int i = 1; i < delivered.size(); i++) {
      assertThat(delivered.get(i).from()).as("%s: transition %d follows on from %d", context, i, i - 1)
          .isEqualTo(delivered.get(i - 1).to());
    }
    assertThat(delivered.get(delivered.size() - 1).to()).as(context).isEqualTo(last);
    double counted = meters.get("breakwater.breaker.transitions").counters().stream()
        .mapToDouble(Counter::count).sum();
    assertThat(counted).as("%s: transitions counted", context).isEqualTo(delivered.size());
    assertThat(delivered.stream().filter(t -> t.to() == State.HALF_OPEN).count()).as(context).isGreaterThan(10);
    assertThat(store.maxInFlight.get()).as("%s: probes in flight at once", context).isEqualTo(1);
    assertThat(store.inFlight.get()).as("%s: claims not released", context).isZero();
  }

  private static void callRandomly(CircuitBreaker b, ManualClock clock, SplittableRandom random) {
    ArrayDeque<Sinks.One<String>> pending = new ArrayDeque<>();
    for (int i = 0; i < OPERATIONS; i++) {
      int dice = random.nextInt(100);
      if (dice < 10) {
        clock.advance(random.nextLong(1_000_000L));
      } else if (dice < 40) {
        Mono.just("ok").transformDeferred(guardedBy(b)).subscribe(v -> {}, e -> {});
      } else if (dice < 72) {
        Mono.error(new HttpStatusException(503)).transformDeferred(guardedBy(b)).subscribe(v -> {}, e -> {});
      } else if (dice < 75) {
        Mono.error(new HttpStatusException(404)).transformDeferred(guardedBy(b)).subscribe(v -> {}, e -> {});
      } else if (dice < 80) {
        Mono.never().transformDeferred(guardedBy(b)).subscribe(v -> {}, e -> {}).dispose();
      } else if (dice < 90) {
        Sinks.One<String> later = Sinks.one();
        later.asMono().transformDeferred(guardedBy(b)).subscribe(v -> {}, e -> {});
        pending.add(later);
      } else if (!pending.isEmpty()) {
        Sinks.One<String> oldest = pending.poll();
        if (random.nextBoolean()) {
          oldest.tryEmitValue("late");
        } else {
          oldest.tryEmitError(new HttpStatusException(504));
        }
      }
    }
    for (Sinks.One<String> later; (later = pending.poll()) != null; ) {
      later.tryEmitValue("late");
    }
  }

  /** Time that jumps forward when a test thread says so. */
  static final class ManualClock implements Scheduler {
    private final AtomicLong nanos = new AtomicLong();

    void advance(long by) {
      nanos.addAndGet(by);
    }

    @Override
    public long now(TimeUnit unit) {
      return unit.convert(nanos.get(), TimeUnit.NANOSECONDS);
    }

    @Override
    public Disposable schedule(Runnable task) {
      return Schedulers.immediate().schedule(task);
    }

    @Override
    public Worker createWorker() {
      return Schedulers.immediate().createWorker();
    }
  }

  /** Grants every claim, so that only the breaker's own permits gate probes, and counts claims held at once. */
  static final class ProbeCountingStore implements BreakerStateStore {
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();

    @Override
    public Mono<Void> publish(StateTransition transition) {
      return Mono.empty();
    }

    @Override
    public Flux<StateTransition> transitions(String breaker) {
      return Flux.never();
    }

    @Override
    public Mono<Boolean> claimProbe(String breaker, int permits, Duration lease) {
      return Mono.fromSupplier(() -> {
        maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        return true;
      });
    }

    @Override
    public Mono<Void> releaseProbe(String breaker) {
      return Mono.fromRunnable(inFlight::decrementAndGet);
    }
  }
}
