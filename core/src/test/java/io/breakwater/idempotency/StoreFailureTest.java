package io.breakwater.idempotency;

import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.sideEffect;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.FailureKind;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** What idempotentBy does when its store fails: writes fail closed, reads may fail open, outcomes are not lost. */
class StoreFailureTest {

  static final byte[] SECRET = DelegatingStore.SECRET;

  private final AtomicInteger executions = new AtomicInteger();
  private final IdempotencyKey key = IdempotencyKey.of("payments.charge", Map.of("order", 7));
  private final Mono<String> charge = Mono.fromCallable(() -> "charged-" + executions.incrementAndGet());

  /** A store whose every operation fails, as a Redis that is down would. */
  private static final class DownStore implements IdempotencyStore {
    @Override
    public Mono<Claim> claim(String key, String fingerprint, String owner, Duration lease) {
      return Mono.error(new IOException("Connection refused"));
    }

    @Override
    public Mono<Boolean> complete(String key, String owner, Outcome outcome, Duration ttl) {
      return Mono.error(new IOException("Connection refused"));
    }

    @Override
    public Mono<Boolean> release(String key, String owner) {
      return Mono.error(new IOException("Connection refused"));
    }

    @Override
    public Mono<Boolean> renew(String key, String owner, Duration lease) {
      return Mono.error(new IOException("Connection refused"));
    }
  }

  @Test
  void writesFailClosedWithATypedErrorAndTheSideEffectDoesNotRun() {
    IdempotencyPolicy policy = IdempotencyPolicy.builder(new DownStore()).keySecret(SECRET).failOpenForReads(true)
        .build();

    StepVerifier.create(charge.transformDeferred(idempotentBy(key, policy, String.class))
            .transformDeferred(sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(StoreUnavailableException.class).hasMessageContaining("failing closed")
              .hasRootCauseMessage("Connection refused");
          assertThat(((StoreUnavailableException) e).failureKind()).isEqualTo(FailureKind.CONNECTION);
        })
        .verify();
    assertThat(executions).hasValue(0);
  }

  @Test
  void undeclaredCallsFailClosedToo() {
    IdempotencyPolicy policy = IdempotencyPolicy.builder(new DownStore()).keySecret(SECRET).failOpenForReads(true)
        .build();

    StepVerifier.create(charge.transformDeferred(idempotentBy(key, policy, String.class)))
        .expectError(StoreUnavailableException.class)
        .verify();
    assertThat(executions).hasValue(0);
  }

  @Test
  void readsFailOpenOnlyWhenThePolicySaysSo() {
    IdempotencyPolicy closed = IdempotencyPolicy.builder(new DownStore()).keySecret(SECRET).build();
    IdempotencyPolicy open = IdempotencyPolicy.builder(new DownStore()).keySecret(SECRET).failOpenForReads(true)
        .build();

    StepVerifier.create(charge.transformDeferred(idempotentBy(key, closed, String.class))
            .transformDeferred(sideEffect(SideEffect.READ_ONLY)))
        .expectError(StoreUnavailableException.class)
        .verify();
    StepVerifier.create(charge.transformDeferred(idempotentBy(key, open, String.class))
            .transformDeferred(sideEffect(SideEffect.READ_ONLY)))
        .expectNext("charged-1")
        .verifyComplete();
  }

  @Test
  void outcomeThatCannotBeStoredStillReachesTheCaller() {
    IdempotencyStore completionFails = new DelegatingStore(IdempotencyStore.inMemory()) {
      @Override
      public Mono<Boolean> complete(String k, String owner, Outcome outcome, Duration ttl) {
        return Mono.error(new IOException("Connection reset"));
      }
    };

    IdempotencyPolicy policy = IdempotencyPolicy.builder(completionFails).keySecret(SECRET).build();
    StepVerifier.create(charge.transformDeferred(idempotentBy(key, policy,
            String.class)))
        .expectNext("charged-1")
        .verifyComplete();
  }

  @Test
  void aStoreFailureNamesItsKeyByTheKeysTagNeverByItsValue() {
    IdempotencyPolicy policy = IdempotencyPolicy.builder(new DownStore()).keySecret(SECRET).build();

    StepVerifier.create(charge.transformDeferred(idempotentBy(key, policy, String.class)))
        .expectErrorSatisfies(e -> assertThat(((StoreUnavailableException) e).source())
            .isEqualTo(policy.tag(key)).isNotEqualTo(key.value()))
        .verify();
  }
}
