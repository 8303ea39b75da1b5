package io.breakwater.examples.guide;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.examples.guide.Domain.Order;
import io.breakwater.examples.guide.Domain.Receipt;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.WriteOutcomeUnknownException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

class RefundsTest {

  @Test
  void aRefundRetriedAndAskedForAgainIsMadeOnce() {
    AtomicInteger attempts = new AtomicInteger();
    AtomicInteger refunded = new AtomicInteger();
    Refunds refunds = new Refunds(order -> Mono.defer(() -> attempts.incrementAndGet() == 1
        ? Mono.error(new ConnectException("Connection refused"))   // never reached the API: safe to send again
        : Mono.fromSupplier(() -> new Receipt(order.id(), "refunded #" + refunded.incrementAndGet()))));
    Order order = new Order("o-42", 1_999);

    Receipt first = refunds.refund(order).block(Duration.ofSeconds(10));
    var duplicates = Flux.range(0, 8).flatMap(i -> refunds.refund(order)).collectList().block(Duration.ofSeconds(10));

    assertThat(first).isEqualTo(new Receipt("o-42", "refunded #1"));
    assertThat(duplicates).hasSize(8).containsOnly(first);
    assertThat(attempts).as("one failed attempt, one retry, no call for the duplicates").hasValue(2);
    assertThat(refunded).hasValue(1);
  }

  /** Issue 35: a 503 leaves open whether the refund was made: it is not sent again, and duplicates are told so. */
  @Test
  void aRefundAnswered503IsNotSentAgainAndDuplicatesAreToldItsOutcomeIsUnknown() {
    AtomicInteger attempts = new AtomicInteger();
    Refunds refunds = new Refunds(order -> Mono.defer(() -> {
      attempts.incrementAndGet();
      return Mono.error(new HttpStatusException(503));
    }));
    Order order = new Order("o-43", 1_999);

    assertThatThrownBy(() -> refunds.refund(order).block(Duration.ofSeconds(10)))
        .isInstanceOf(HttpStatusException.class);
    assertThatThrownBy(() -> refunds.refund(order).block(Duration.ofSeconds(10)))
        .isInstanceOf(WriteOutcomeUnknownException.class);
    assertThat(attempts).as("sent once").hasValue(1);
  }

  @Test
  void anotherOrderIsRefundedOnItsOwn() {
    AtomicInteger refunded = new AtomicInteger();
    Refunds refunds = new Refunds(order -> Mono.fromSupplier(() -> {
      refunded.incrementAndGet();
      return new Receipt(order.id(), "refunded");
    }));

    refunds.refund(new Order("o-1", 100)).block(Duration.ofSeconds(10));
    refunds.refund(new Order("o-2", 100)).block(Duration.ofSeconds(10));

    assertThat(refunded).hasValue(2);
  }
}
