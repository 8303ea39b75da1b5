package io.breakwater.examples.guide;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.examples.guide.Domain.Receipt;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.retry.RetryPolicy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class ArchitectureTest {

  @Test
  void aFailedAttemptIsRetriedInsideTheClaimAndADuplicateIsAnsweredFromTheStore() {
    AtomicInteger attempts = new AtomicInteger();
    Mono<Receipt> call = Mono.defer(() -> attempts.incrementAndGet() == 1
        ? Mono.error(new java.net.ConnectException("Connection refused"))   // never reached: safe to send again
        : Mono.just(new Receipt("o-9", "refunded")));
    CircuitBreaker breaker = CircuitBreaker.ofDefaults("payments");
    RetryPolicy policy = RetryPolicy.builder().name("payments").build();
    IdempotencyKey key = IdempotencyKey.explicit("payments.refund", "o-9", "o-9");
    IdempotencyStore store = IdempotencyStore.inMemory();
    DeadlineSpec budget = DeadlineSpec.builder(Duration.ofSeconds(30)).name("refund").build();

    StepVerifier.withVirtualTime(() -> Architecture.compose(call, breaker, policy, key, store, budget)
            .then(Architecture.compose(call, breaker, policy, key, store, budget)))
        .thenAwait(Duration.ofSeconds(5))
        .expectNext(new Receipt("o-9", "refunded"))
        .verifyComplete();
    assertThat(attempts).as("one failure, one retry; the duplicate never reached the call").hasValue(2);
  }
}
