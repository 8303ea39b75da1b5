package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.*;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.examples.guide.Domain.Receipt;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.retry.RetryPolicy;
import reactor.core.publisher.Mono;

/** The composition order of {@code docs/architecture.md}, the order {@code Tool.of} uses. */
public final class Architecture {

  private Architecture() {}

  // snippet:architecture-composition-order
  public static Mono<Receipt> compose(Mono<Receipt> call, CircuitBreaker breaker, RetryPolicy policy,
      IdempotencyKey key, IdempotencyStore store, DeadlineSpec taskBudget) {
    Mono<Receipt> guarded = call
        .transformDeferred(perCallTimeout())                    // each attempt: min(remaining × 0.6, 12 s)
        .transformDeferred(guardedBy(breaker))                  // every attempt passes the breaker
        .transformDeferred(retryWithBudget(policy))             // retries, bounded by budgets and the deadline
        .transformDeferred(idempotentBy(key, store, Receipt.class))  // a hit skips all of the above
        .transformDeferred(withDeadline(taskBudget));           // outermost: everything inside reads it
    return guarded;
  }
  // end-snippet
}
