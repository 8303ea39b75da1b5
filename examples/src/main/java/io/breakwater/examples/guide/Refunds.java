package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.*;

import io.breakwater.examples.guide.Domain.Order;
import io.breakwater.examples.guide.Domain.Payments;
import io.breakwater.examples.guide.Domain.Receipt;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.Backoff;
import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * A refund that happens once per order, however often it is retried or asked for: the snippet of
 * {@code docs/getting-started.md} and {@code docs/idempotency.md}. {@code RefundsTest} proves it.
 */
// snippet:idempotency-refund-once
public final class Refunds {

  private final Payments payments;

  public Refunds(Payments payments) {
    this.payments = payments;
  }

  private final IdempotencyStore store = IdempotencyStore.inMemory();      // one per process; Redis to share

  public Mono<Receipt> refund(Order order) {
    return payments.refund(order)
        .transformDeferred(retryWithBudget(Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))))
        .transformDeferred(idempotentBy(IdempotencyKey.explicit("payments.refund", order.id(), order), store,
            Receipt.class))
        .transformDeferred(sideEffect(SideEffect.NON_IDEMPOTENT_WRITE))
        .transformDeferred(withDeadline(Duration.ofSeconds(30)));
  }
}
// end-snippet
