package io.breakwater.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.hedge.HedgePolicy;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** {@code ToolDescriptor.hedge(..)}: where hedges sit in the tool's pipeline, and what they may not do. */
class ToolHedgeTest {

  static final Duration VERIFY = Duration.ofSeconds(5);

  final Fixtures fx = new Fixtures();
  final List<Long> startedAtMillis = new CopyOnWriteArrayList<>();

  HedgePolicy hedge() {
    HedgePolicy hedge = HedgePolicy.builder().name("flights").delay(Duration.ofMillis(100)).budget(1.0)
        .meterRegistry(fx.meters).build();
    Mono.just("warm").transformDeferred(io.breakwater.Breakwater.hedgedBy(hedge)).block();   // one hedge's budget
    return hedge;
  }

  /** The n-th attempt (0-based) answers, or fails, after the given time. */
  Mono<String> attempt(AtomicInteger calls, Duration[] after, boolean[] fails) {
    return Mono.defer(() -> {
      int n = calls.getAndIncrement();
      startedAtMillis.add(Schedulers.parallel().now(TimeUnit.MILLISECONDS));
      Mono<Long> wait = Mono.delay(after[Math.min(n, after.length - 1)]);
      return fails[Math.min(n, fails.length - 1)]
          ? wait.then(Mono.error(new HttpStatusException(503))) : wait.thenReturn("attempt-" + n);
    });
  }

  @Test
  void aSlowAttemptIsHedgedAndTheFasterAttemptAnswersTheCall() {
    AtomicInteger calls = new AtomicInteger();
    Duration[] after = {Duration.ofSeconds(1), Duration.ofMillis(50)};
    Tool<String, String> tool = Tool.of(fx.descriptor("flights.search").hedge(hedge()).build(),
        (String q) -> attempt(calls, after, new boolean[] {false}), String.class);
    StepVerifier.withVirtualTime(() -> tool.call("LYS-LIS"))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(150))
        .expectNext("attempt-1")
        .expectComplete()
        .verify(VERIFY);
    assertThat(startedAtMillis).containsExactly(0L, 100L);
    assertThat(fx.events).singleElement().asString().contains("\"attempts\":2", "\"outcome\":\"success\"");
  }

  @Test
  void everyHedgePassesTheBreakerAndTheRetryComesOnlyAfterEveryAttemptFailed() {
    CircuitBreakerRegistry breakers = CircuitBreakerRegistry.builder()
        .breakers(name -> CircuitBreaker.builder(name).minimumCalls(100).meterRegistry(fx.meters)
            .rampUp(Duration.ZERO).noSlowCallTrigger().build())
        .build();
    AtomicInteger calls = new AtomicInteger();
    Duration[] after = {Duration.ofMillis(150), Duration.ofMillis(100), Duration.ofMillis(10)};
    boolean[] fails = {true, true, false};
    Tool<String, String> tool = Tool.of(fx.descriptor("flights.search").hedge(hedge()).breakers(breakers).build(),
        (String q) -> attempt(calls, after, fails), String.class);
    StepVerifier.withVirtualTime(() -> tool.call("LYS-LIS"))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(310))
        .expectNext("attempt-2")
        .expectComplete()
        .verify(VERIFY);
    // primary at 0 (fails at 150), hedge at 100 (fails at 200), then one retry after the 100 ms backoff
    assertThat(startedAtMillis).containsExactly(0L, 100L, 300L);
    assertThat(fx.meters.counter("breakwater.breaker.calls", "breaker", "flights.search", "outcome", "failure")
        .count()).as("the breaker saw both failed attempts").isEqualTo(2);
  }

  @Test
  void aNonIdempotentWriteHedgedWithoutIdempotencyIsRefusedWhenBuilt() {
    assertThatThrownBy(() -> fx.descriptor("payments.refund").sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)
            .retry(Fixtures.retry("payments.refund", 0).build()).hedge(hedge()).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("NON_IDEMPOTENT_WRITE with .hedge(..)")
        .hasMessageContaining("DEDUPLICATED_WRITE");
  }

  /** Issue 35: the claim is taken once, but a backup would be sent while the first may be processed. */
  @Test
  void aNonIdempotentWriteHedgedWithIdempotencyIsRefusedWhenBuiltToo() {
    assertThatThrownBy(() -> fx.descriptor("payments.refund").sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)
            .idempotency(IdempotencyPolicy.of(IdempotencyStore.inMemory())).singleTenant()
            .hedge(hedge()).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("idempotency or not")
        .hasMessageContaining("DEDUPLICATED_WRITE");
    assertThat(fx.descriptor("payments.refund").sideEffect(SideEffect.DEDUPLICATED_WRITE)
        .idempotency(IdempotencyPolicy.of(IdempotencyStore.inMemory())).singleTenant()
        .hedge(hedge()).build().hedge()).as("a deduplicated write may be hedged").isNotNull();
  }
}
