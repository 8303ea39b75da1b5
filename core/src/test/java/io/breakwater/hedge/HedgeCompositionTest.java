package io.breakwater.hedge;

import static io.breakwater.Breakwater.hedgedBy;
import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.sideEffect;
import static io.breakwater.Breakwater.withRetryBudget;
import static io.breakwater.hedge.HedgedByTest.DELAY;
import static io.breakwater.hedge.HedgedByTest.VERIFY;
import static io.breakwater.hedge.HedgedByTest.fill;
import static io.breakwater.hedge.ScriptedDependency.answer;
import static io.breakwater.hedge.ScriptedDependency.answering;
import static io.breakwater.hedge.ScriptedDependency.failure;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** What a hedge may be composed with: side effects, idempotency, retries, and other hedges. */
class HedgeCompositionTest {

  final SimpleMeterRegistry meters = new SimpleMeterRegistry();

  HedgePolicy policy(String name, int maxHedges) {
    HedgePolicy policy = HedgePolicy.builder().name(name).delay(DELAY).maxHedges(maxHedges).budget(1.0)
        .meterRegistry(meters).build();
    fill(policy, maxHedges);
    return policy;
  }

  /** A retry budget that grants every retry and counts the requests for one. */
  static final class CountingRetryBudget implements RetryBudget {
    final AtomicInteger calls = new AtomicInteger();
    final AtomicInteger retries = new AtomicInteger();

    @Override
    public void onRequest() {
      calls.incrementAndGet();
    }

    @Override
    public Mono<Boolean> tryAcquire(long nowMillis) {
      retries.incrementAndGet();
      return Mono.just(true);
    }

    @Override
    public double level() {
      return 0;
    }
  }

  RetryPolicy retry(RetryBudget budget) {
    return RetryPolicy.builder().name("search").backoff(Backoff.fixed(Duration.ofMillis(100)))
        .timeoutBase(Duration.ZERO).budget(budget).meterRegistry(meters).build();
  }

  @Test
  void aNonIdempotentWriteOutsideIdempotentByIsRefusedBeforeAnyCall() {
    ScriptedDependency charge = answering(Duration.ofMillis(10));
    StepVerifier.create(charge.call()
            .transformDeferred(hedgedBy(policy("payments", 1)))
            .transformDeferred(sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(UnsafeHedgeException.class)
              .hasMessageContaining("Refusing to hedge 'payments'")
              .hasMessageContaining("idempotentBy");
          assertThat(((UnsafeHedgeException) e).failureKind()).isEqualTo(FailureKind.MISCONFIGURED);
          assertThat(((UnsafeHedgeException) e).source()).isEqualTo("payments");
        })
        .verify(VERIFY);
    assertThat(charge.calls).as("no call was made").hasValue(0);
  }

  @Test
  void aNonIdempotentStreamOutsideIdempotentByIsRefusedToo() {
    StepVerifier.create(Flux.just("a", "b")
            .transformDeferred(hedgedBy(policy("payments", 1)))
            .transformDeferred(sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)))
        .expectError(UnsafeHedgeException.class)
        .verify(VERIFY);
  }

  /**
   * Issue 35: the claim is taken once, but the backup would be sent while the first charge may be processed, so a
   * dependency slower than the hedge delay would charge twice. Refused at subscription, declared or implied.
   */
  @Test
  void aNonIdempotentWriteInsideIdempotentByIsRefusedBeforeAnyCharge() {
    for (boolean declared : new boolean[] {true, false}) {
      HedgePolicy policy = policy("payments", 1);
      ScriptedDependency charge = answering(Duration.ofSeconds(10), Duration.ofMillis(100));
      StepVerifier.withVirtualTime(() -> {
            Mono<String> guarded = charge.call()
                .transformDeferred(hedgedBy(policy))
                .transformDeferred(idempotentBy(IdempotencyKey.explicit("payments.charge", "order-42", 42),
                    IdempotencyStore.inMemory(), String.class));
            return declared ? guarded.transformDeferred(sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)) : guarded;
          })
          .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(UnsafeHedgeException.class)
              .hasMessageContaining("DEDUPLICATED_WRITE"))
          .verify(VERIFY);
      assertThat(charge.calls).as(declared ? "declared" : "undeclared inside idempotentBy").hasValue(0);
    }
  }

  /** Issue 35: a write the dependency deduplicates on the key it receives may be hedged inside idempotentBy. */
  @Test
  void aDeduplicatedWriteInsideIdempotentByIsHedged() {
    HedgePolicy policy = policy("payments", 1);
    ScriptedDependency charge = answering(Duration.ofSeconds(10), Duration.ofMillis(100));
    StepVerifier.withVirtualTime(() -> charge.call()
            .transformDeferred(hedgedBy(policy))
            .transformDeferred(idempotentBy(IdempotencyKey.explicit("payments.charge", "order-42", 42),
                IdempotencyStore.inMemory(), String.class))
            .transformDeferred(sideEffect(SideEffect.DEDUPLICATED_WRITE)))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(200))
        .expectNext("a1")
        .expectComplete()
        .verify(VERIFY);
    assertThat(charge.calls).hasValue(2);
  }

  @Test
  void readOnlyAndIdempotentWritesAreHedged() {
    for (SideEffect effect : new SideEffect[] {SideEffect.READ_ONLY, SideEffect.IDEMPOTENT_WRITE}) {
      HedgePolicy policy = policy("put", 1);
      ScriptedDependency put = answering(Duration.ofSeconds(10), Duration.ofMillis(100));
      StepVerifier.withVirtualTime(() -> put.call()
              .transformDeferred(hedgedBy(policy))
              .transformDeferred(sideEffect(effect)))
          .expectSubscription()
          .thenAwait(Duration.ofMillis(200))
          .expectNext("a1")
          .expectComplete()
          .verify(VERIFY);
    }
  }

  @Test
  void aHedgeIsNotARetryAndSpendsNoRetryBudget() {
    HedgePolicy hedge = policy("search", 1);
    CountingRetryBudget budget = new CountingRetryBudget();
    ScriptedDependency search = answering(Duration.ofSeconds(10), Duration.ofMillis(100));
    StepVerifier.withVirtualTime(() -> search.call()
            .transformDeferred(hedgedBy(hedge))
            .transformDeferred(retryWithBudget(retry(budget)))
            .transformDeferred(withRetryBudget(0)))                 // the task may not retry at all
        .expectSubscription()
        .thenAwait(Duration.ofMillis(200))
        .expectNext("a1")
        .expectComplete()
        .verify(VERIFY);
    assertThat(search.calls).as("the hedge was made although no retry was allowed").hasValue(2);
    assertThat(budget.retries).as("no retry token was asked for").hasValue(0);
    assertThat(budget.calls).as("the retry saw one call").hasValue(1);
    assertThat(meters.find("breakwater.retry.retries").counters()).isEmpty();
  }

  @Test
  void aRetryAfterAllHedgesFailedIsOneRetryAndIsHedgedAgain() {
    HedgePolicy hedge = policy("search", 1);
    fill(hedge, 2);
    CountingRetryBudget budget = new CountingRetryBudget();
    ScriptedDependency search = new ScriptedDependency(n -> switch (n) {
      case 0 -> failure(new HttpStatusException(503), Duration.ofMillis(150));   // primary, fails at 150 ms
      case 1 -> failure(new HttpStatusException(503), Duration.ofMillis(100));   // hedge, fails at 200 ms
      case 2 -> answer("slow", Duration.ofSeconds(10));                          // the retry, at 300 ms
      default -> answer("retry's hedge", Duration.ofMillis(50));                 // its hedge, at 400 ms
    });
    StepVerifier.withVirtualTime(() -> search.call()
            .transformDeferred(hedgedBy(hedge))
            .transformDeferred(retryWithBudget(retry(budget))))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(450))
        .expectNext("retry's hedge")
        .expectComplete()
        .verify(VERIFY);
    assertThat(search.startedAtMillis).containsExactly(0L, 100L, 300L, 400L);
    assertThat(budget.retries).as("one retry for the two failed attempts").hasValue(1);
    assertThat(meters.counter("breakwater.retry.retries", "dependency", "search", "reason", "server_error").count())
        .isEqualTo(1);
  }

  @Test
  void nestedHedgesDoNotMultiplyTheAttempts() {
    HedgePolicy outer = policy("outer", 2);
    HedgePolicy inner = policy("inner", 2);
    ScriptedDependency search = answering(Duration.ofSeconds(10));
    StepVerifier.withVirtualTime(() -> search.call()
            .transformDeferred(hedgedBy(inner))
            .transformDeferred(hedgedBy(outer)))
        .expectSubscription()
        .thenAwait(Duration.ofSeconds(10))
        .expectNext("a0")
        .expectComplete()
        .verify(VERIFY);
    assertThat(search.startedAtMillis).as("the outer policy's attempts only").containsExactly(0L, 100L, 200L);
    assertThat(meters.counter("breakwater.hedge.started", "dependency", "inner").count()).isZero();
  }
}
