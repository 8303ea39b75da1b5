package io.breakwater.issues;

import static io.breakwater.Breakwater.withDeadline;
import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * Incident 1: the third tool of a 10 s task stalled for 28 s, and the whole task failed. With an adaptive per-call
 * timeout, retries and a stale fallback, the task answers by its deadline, degraded.
 */
class StalledThirdToolIncidentTest {

  static final Duration VERIFY = Duration.ofSeconds(5);
  static final Duration STALL = Duration.ofSeconds(28);

  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final AtomicBoolean stalling = new AtomicBoolean();
  final AtomicInteger stalledCallsCancelled = new AtomicInteger();

  Mono<String> flights(String q) {
    return Mono.just("flights " + q).delayElement(Duration.ofMillis(300));
  }

  Mono<String> hotels(String q) {
    return Mono.just("hotels " + q).delayElement(Duration.ofMillis(300));
  }

  /** Usually 400 ms; stalls 28 s once {@link #stalling} is set. */
  Mono<String> weather(String q) {
    return stalling.get()
        ? Mono.just("weather " + q).delayElement(STALL).doOnCancel(stalledCallsCancelled::incrementAndGet)
        : Mono.just("weather " + q).delayElement(Duration.ofMillis(400));
  }

  ToolDescriptor descriptor(String name) {
    return ToolDescriptor.builder(name).sideEffect(SideEffect.READ_ONLY)
        .timeouts(CallTimeouts.adaptive().warmUp(20, Duration.ofSeconds(5)).build())   // warm after 20 calls
        .retry(RetryPolicy.builder().name(name).backoff(Backoff.fixed(Duration.ofMillis(100)))
            .timeoutBase(Duration.ZERO).budget(RetryBudget.unlimited()).build())
        .meterRegistry(meters).eventLog(e -> { })
        .build();
  }

  @Test
  void withoutBreakwaterTheStallFailsTheWholeTask() {
    stalling.set(true);
    StepVerifier.withVirtualTime(() -> flights("LYS-LIS").zipWith(hotels("Lisbon"))
            .flatMap(t -> weather("Lisbon").map(w -> t.getT1() + ", " + t.getT2() + ", " + w))
            .transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .thenAwait(Duration.ofSeconds(10))
        .expectError(DeadlineExceededException.class)
        .verify(VERIFY);
  }

  @Test
  void theTaskAnswersByItsDeadlineWithAStaleWeather() {
    Tool<String, String> flightsTool = Tool.of(descriptor("flights.search"), this::flights, String.class);
    Tool<String, String> hotelsTool = Tool.of(descriptor("hotels.search"), this::hotels, String.class);
    Tool<String, String> weatherTool = Tool.of(descriptor("weather.forecast"), this::weather, String.class)
        .withFallbacks(Fallbacks.<String, String>builder().stale(Duration.ofHours(1)).build());
    AtomicLong finishedAtMillis = new AtomicLong();

    StepVerifier.withVirtualTime(() -> Flux.range(0, 20).concatMap(i -> weatherTool.call("Lisbon")).then()
            // the incident: 28 s stall in a 10 s task
            .then(Mono.fromRunnable(() -> stalling.set(true)))
            .then(Mono.defer(() -> {
              long start = Schedulers.parallel().now(TimeUnit.MILLISECONDS);
              return flightsTool.call("LYS-LIS")
                  .zipWith(hotelsTool.call("Lisbon"))
                  .flatMap(t -> weatherTool.outcome("Lisbon").map(w -> t.getT1() + ", " + t.getT2() + ", "
                      + w.forModel()))
                  .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofSeconds(10)).name("plan-trip")
                      .build()))
                  .doOnSuccess(v -> finishedAtMillis.set(Schedulers.parallel().now(TimeUnit.MILLISECONDS) - start));
            })))
        .thenAwait(Duration.ofSeconds(20))
        .assertNext(answer -> assertThat(answer).startsWith("flights LYS-LIS, hotels Lisbon, weather Lisbon")
            .contains("(stale: the last good answer"))
        .expectComplete()
        .verify(VERIFY);

    // learnt from 20 calls of 400 ms: p99 + 250 ms = 650 ms per attempt; 4 attempts, 3 × 100 ms backoff
    assertThat(weatherTool.currentTimeout().toMillis()).isBetween(649L, 651L);
    assertThat(finishedAtMillis.get()).isEqualTo(300 + 4 * 650 + 3 * 100).isLessThan(10_000L);
    // every stalled attempt was cancelled, none left running
    assertThat(stalledCallsCancelled).hasValue(4);
    assertThat(meters.counter("breakwater.tool.timeouts", "tool", "weather.forecast", "type", "per_call").count())
        .isEqualTo(4);
    assertThat(meters.find("breakwater.tool.calls").tag("tool", "weather.forecast").tag("result", "fallback")
        .timer().count()).isEqualTo(1);
    assertThat(ToolOutcome.Source.STALE.tag()).isEqualTo("stale");
  }
}
