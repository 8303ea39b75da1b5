package io.breakwater.retry;

import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.HttpStatusException;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Issue 35 and 38: the inline form, {@code retryWithBudget(Backoff.fullJitter(..))} written in the method that makes
 * each call, bounds retries per dependency, and building it costs no meter, lookup or log line.
 */
class InlinePolicyBudgetTest {

  private final SimpleMeterRegistry global = new SimpleMeterRegistry();

  @BeforeEach
  void watchTheGlobalRegistry() {
    Metrics.addRegistry(global);
  }

  @AfterEach
  void forgetIt() {
    Metrics.removeRegistry(global);
  }

  /** The getting-started shape, built per call. */
  private static Mono<String> flights(Mono<String> call) {
    return call
        .transformDeferred(retryWithBudget(Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))))
        .transformDeferred(withDeadline(Duration.ofSeconds(10)));
  }

  @Test
  void fortyConcurrentCallsToADeadDependencySendAtMostSixtyRequests() {
    AtomicLong requests = new AtomicLong();
    Mono<String> dead = Mono.defer(() -> {
      requests.incrementAndGet();
      return Mono.error(new HttpStatusException(503));
    });
    StepVerifier.withVirtualTime(() -> Flux.range(0, 40)
            .flatMap(i -> flights(dead).onErrorResume(e -> Mono.empty()), 40)
            .then())
        .thenAwait(Duration.ofSeconds(30))
        .expectComplete()
        .verify(Duration.ofSeconds(10));
    assertThat(requests.get()).as("40 calls + the budget's 10 tokens + 0.15 per call, not 4 × 40")
        .isBetween(40L, 60L);
  }

  @Test
  void aTenMinuteOutageAtTwentyCallsPerSecondKeepsInlineRetriesUnderFifteenPercent() {
    VirtualTimeScheduler vts = VirtualTimeScheduler.getOrSet();
    try {
      AtomicLong requests = new AtomicLong();
      Mono<String> dead = Mono.defer(() -> {
        requests.incrementAndGet();
        return Mono.error(new HttpStatusException(503));
      });
      long calls = 600L * 20;
      Flux.interval(Duration.ZERO, Duration.ofMillis(50), vts).take(calls)
          .flatMap(i -> flights(dead).onErrorResume(e -> Mono.empty()), Integer.MAX_VALUE)
          .subscribe();
      vts.advanceTimeBy(Duration.ofMinutes(11));
      double retries = requests.get() - calls;
      assertThat(retries / requests.get()).as("retries over requests").isLessThan(0.15);
    } finally {
      VirtualTimeScheduler.reset();
    }
  }

  @Test
  void buildingTheInlineFormPerCallRegistersNoMeterAndLogsNothing() {
    PrintStream err = System.err;
    ByteArrayOutputStream logged = new ByteArrayOutputStream();
    System.setErr(new PrintStream(logged, true, StandardCharsets.UTF_8));   // where the tests' SLF4J logger writes
    try {
      int before = global.getMeters().size();
      List<Object> built = new ArrayList<>();
      for (int i = 0; i < 1_000; i++) {
        built.add(retryWithBudget(Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))));
        built.add(retryWithBudget("flights", Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))));
        built.add(RetryPolicy.builder().name("hotels").build());
      }
      assertThat(built).hasSize(3_000);
      assertThat(global.getMeters()).as("no meter registered by building").hasSize(before);
      assertThat(logged.toString(StandardCharsets.UTF_8)).as("nothing logged").isEmpty();
    } finally {
      System.setErr(err);
    }
  }
}
