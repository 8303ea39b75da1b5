package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.retryWithBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.examples.guide.Classification.PaymentDeclinedException;
import io.breakwater.examples.guide.Classification.Payments;
import io.breakwater.examples.guide.Classification.VendorApiException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class ClassificationTest {

  @Test
  void aDeclinedPaymentIsTriedOnceAndNeverCountsAgainstTheBreaker() {
    Payments payments = Classification.payments();
    AtomicInteger calls = new AtomicInteger();

    for (int i = 0; i < 30; i++) {
      StepVerifier.withVirtualTime(() -> call(payments, calls, () -> new PaymentDeclinedException("card declined")))
          .thenAwait(Duration.ofMinutes(1))
          .expectError(PaymentDeclinedException.class)
          .verify();
    }

    assertThat(calls).as("30 calls, no retry").hasValue(30);
    assertThat(payments.breaker().state()).isEqualTo(io.breakwater.breaker.CircuitBreaker.State.CLOSED);
  }

  @Test
  void theVendorsServerErrorIsRetriedAndItsBadRequestIsNot() {
    Payments payments = Classification.payments();
    AtomicInteger unavailable = new AtomicInteger();
    AtomicInteger badRequest = new AtomicInteger();

    StepVerifier.withVirtualTime(() -> call(payments, unavailable, () -> new VendorApiException(503)))
        .thenAwait(Duration.ofMinutes(1))
        .expectError()
        .verify();
    StepVerifier.withVirtualTime(() -> call(payments, badRequest, () -> new VendorApiException(400)))
        .thenAwait(Duration.ofMinutes(1))
        .expectError(VendorApiException.class)
        .verify();

    assertThat(unavailable).as("the first attempt and the default 3 retries").hasValue(4);
    assertThat(badRequest).hasValue(1);
  }

  private static Mono<String> call(Payments payments, AtomicInteger calls, Supplier<RuntimeException> failure) {
    return Mono.<String>defer(() -> {
          calls.incrementAndGet();
          return Mono.error(failure.get());
        })
        .transformDeferred(guardedBy(payments.breaker()))
        .transformDeferred(retryWithBudget(payments.retry()));
  }
}
