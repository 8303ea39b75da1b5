package io.breakwater.retry;

import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.sideEffect;
import static io.breakwater.retry.RetryWithBudgetTest.VERIFY;
import static io.breakwater.retry.RetryWithBudgetTest.fixedPolicy;
import static io.breakwater.retry.RetryWithBudgetTest.status;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.FailureKind;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.retry.RetryWithBudgetTest.Calls;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

class UnsafeRetryTest {

  @Test
  void nonIdempotentWriteOutsideIdempotentByIsRefusedBeforeAnyCall() {
    Calls charge = new Calls();
    StepVerifier.create(charge.mono()
            .transformDeferred(retryWithBudget(fixedPolicy().name("payments").build()))
            .transformDeferred(sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(UnsafeRetryException.class)
              .hasMessageContaining("Refusing to retry 'payments'")
              .hasMessageContaining("idempotentBy")
              .hasMessageContaining("IDEMPOTENT_WRITE");
          assertThat(((UnsafeRetryException) e).failureKind()).isEqualTo(FailureKind.MISCONFIGURED);
        })
        .verify(VERIFY);
    assertThat(charge.count).as("no call was made").hasValue(0);
  }

  @Test
  void nonIdempotentStreamIsRefusedToo() {
    StepVerifier.create(Flux.just(1, 2)
            .transformDeferred(retryWithBudget(fixedPolicy().build()))
            .transformDeferred(sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)))
        .expectError(UnsafeRetryException.class)
        .verify(VERIFY);
  }

  @Test
  void nonIdempotentWriteHoldingAnIdempotencyKeyIsRetriedAfterARefusalThatProvesItWasNotProcessed() {
    Calls charge = new Calls(new java.net.ConnectException("Connection refused"));
    StepVerifier.withVirtualTime(() -> charge.mono()
            .transformDeferred(retryWithBudget(fixedPolicy().build()))
            .transformDeferred(idempotentBy(IdempotencyKey.explicit("payments.charge", "order-42", 42),
                IdempotencyStore.inMemory(), String.class))
            .transformDeferred(sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(100))
        .expectNext("ok")
        .verifyComplete();
  }

  @Test
  void idempotentWriteIsRetried() {
    Calls put = new Calls(status(503));
    StepVerifier.withVirtualTime(() -> put.mono()
            .transformDeferred(retryWithBudget(fixedPolicy().build()))
            .transformDeferred(sideEffect(SideEffect.IDEMPOTENT_WRITE)))
        .expectSubscription()
        .thenAwait(Duration.ofMillis(100))
        .expectNext("ok")
        .verifyComplete();
  }
}
