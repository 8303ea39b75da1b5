package io.breakwater.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.IdempotencyContext;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** deadline → idempotency → retry (budget) → breaker → per-attempt timeout → call, and why. */
class PipelineOrderTest {

  static final Duration VERIFY = Duration.ofSeconds(5);

  final Fixtures fx = new Fixtures();

  static CircuitBreakerRegistry breakers(int minimumCalls) {
    return CircuitBreakerRegistry.builder()
        .breakers(name -> CircuitBreaker.builder(name).minimumCalls(minimumCalls).meterRegistry(new SimpleMeterRegistry())
            .rampUp(Duration.ZERO).noSlowCallTrigger().build())
        .build();
  }

  record Refund(String order, long cents) {}

  @Test
  void everyAttemptGoesThroughTheBreaker() {
    CircuitBreakerRegistry breakers = breakers(3);
    AtomicInteger calls = new AtomicInteger();
    Tool<String, String> tool = Tool.of(fx.descriptor("pay.status").breakers(breakers).build(),
        (String a) -> Mono.defer(() -> {
          calls.incrementAndGet();
          return Mono.error(new HttpStatusException(503));
        }), String.class);
    StepVerifier.withVirtualTime(() -> tool.outcome("o-1")
            .then(Mono.fromCallable(() -> breakers.breaker("pay.status").state())))
        .thenAwait(Duration.ofSeconds(1)).expectNext(CircuitBreaker.State.OPEN).expectComplete().verify(VERIFY);
    // one call, three attempts: the breaker saw each of them and opened on the third
    assertThat(calls).hasValue(3);
  }

  @Test
  void anIdempotentHitIsNotBlockedByAnOpenBreaker() {
    CircuitBreakerRegistry breakers = breakers(2);
    AtomicInteger calls = new AtomicInteger();
    Tool<Refund, String> refund = Tool.of(fx.descriptor("pay.refund").sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)
            .idempotency(IdempotencyPolicy.of(IdempotencyStore.inMemory())).singleTenant().breakers(breakers)
            .retry(Fixtures.retry("pay", 0).build()).build(),
        (Refund r) -> Mono.defer(() -> calls.incrementAndGet() == 1
            ? Mono.just("refunded " + r.order()) : Mono.error(new HttpStatusException(503))), String.class);
    Refund first = new Refund("o-1", 500);
    StepVerifier.withVirtualTime(() -> refund.call(first)
            .then(refund.outcome(new Refund("o-2", 100)))
            .then(refund.outcome(new Refund("o-3", 100)))
            .then(refund.outcome(new Refund("o-4", 100)))
            .then(Mono.fromCallable(() -> breakers.breaker("pay.refund").state()))
            .flatMap(state -> refund.call(first).map(v -> state + " " + v)))
        .expectNext("OPEN refunded o-1").expectComplete().verify(VERIFY);
    // o-1's success and o-2's failure (50 %) opened the breaker; o-3 and o-4 were rejected, the replay of o-1 was not.
    // (Until the breaker recorded a Mono's outcome with its value, o-1's success was recorded after the whole chain,
    // which ran inside o-1's value: o-3 then still ran.)
    assertThat(calls).hasValue(2);
    assertThat(fx.events.get(2)).contains("\"failure_kind\":\"circuit_open\"");
    assertThat(fx.events.get(3)).contains("\"failure_kind\":\"circuit_open\"");
    assertThat(fx.events.get(4)).contains("\"outcome\":\"success\"", "\"attempts\":0");
  }

  @Test
  void theKeyIsHeldAcrossRetriesSoADuplicateWaitsInsteadOfRunning() {
    AtomicInteger calls = new AtomicInteger();
    // a refund API that deduplicates on the key it is sent: retried after a 503 (a plain NON_IDEMPOTENT_WRITE is not)
    Tool<Refund, String> refund = Tool.of(fx.descriptor("pay.refund").sideEffect(SideEffect.DEDUPLICATED_WRITE)
            .idempotency(IdempotencyPolicy.builder(IdempotencyStore.inMemory()).pollInterval(Duration.ofMillis(50))
                .build())
            .singleTenant()
            .build(),
        (Refund r) -> Mono.deferContextual(ctx -> {
          IdempotencyContext.current(ctx).ifPresent(IdempotencyContext::markKeySent);
          return calls.incrementAndGet() == 1
              ? Mono.error(new HttpStatusException(503)) : Mono.just("refunded " + r.order());
        }), String.class);
    Refund r = new Refund("o-1", 500);
    StepVerifier.withVirtualTime(() -> Mono.zip(refund.call(r),
            Mono.delay(Duration.ofMillis(50)).then(refund.call(r)), (a, b) -> a + " / " + b))
        .thenAwait(Duration.ofSeconds(2))
        .expectNext("refunded o-1 / refunded o-1").expectComplete().verify(VERIFY);
    // the first call's retry ran while its key was held; the duplicate, arriving during the backoff, never ran
    assertThat(calls).hasValue(2);
  }
}
