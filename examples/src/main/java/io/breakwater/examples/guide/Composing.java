package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.*;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.hedge.HedgePolicy;
import io.breakwater.http.HttpResponses;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import io.breakwater.retry.Backoff;
import java.time.Duration;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;

/** The snippets of {@code docs/composing.md}; {@code ComposingIT} runs them against a loopback server. */
public final class Composing {

  private Composing() {}

  /** Every operator around one read, in the recommended order. */
  // snippet:composing-read
  static Mono<String> search(HttpClient flights, CircuitBreaker breaker, ConcurrencyLimit inFlight, RateLimit quota,
      HedgePolicy hedge) {                                            // all four: one per dependency, shared
    return HttpResponses.bodyAsString(flights.get().uri("/search"))
        .transformDeferred(perCallTimeout())                          // 1. each attempt's own timeout
        .transformDeferred(guardedBy(breaker))                        // 2. each attempt asks the breaker
        .transformDeferred(limitedBy(inFlight))                       // 3. a permit per attempt, none while backing off
        .transformDeferred(throttledBy(quota))                        // 4. each attempt is a request
        .transformDeferred(hedgedBy(hedge))                           // 5. a backup when an attempt is slow
        .transformDeferred(retryWithBudget("flights",                 // 6. classified retries, the dependency's budget
            Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))))
        .transformDeferred(withDeadline(Duration.ofSeconds(10)));     // 7. the task's deadline, outermost
  }
  // end-snippet

  /** A payment API that deduplicates on the Idempotency-Key header: retried and hedged safely. */
  // snippet:composing-deduplicated-write
  static Mono<String> charge(HttpClient payments, IdempotencyStore store, String orderId, String amount) {
    // payments = IdempotencyKeyHeader.standard().sendOn(client): every attempt carries the call's Idempotency-Key
    return HttpResponses.bodyAsString(payments.post().uri("/charges").send(ByteBufFlux.fromString(Mono.just(amount))))
        .transformDeferred(perCallTimeout())
        .transformDeferred(retryWithBudget("payments", Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))))
        .transformDeferred(idempotentBy(IdempotencyKey.explicit("payments.charge", orderId, amount), store,
            String.class))
        .transformDeferred(sideEffect(SideEffect.DEDUPLICATED_WRITE))   // the API deduplicates on the key it gets
        .transformDeferred(withDeadline(Duration.ofSeconds(30)));
  }
  // end-snippet
}
