package io.breakwater.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.FailureKind;
import io.breakwater.idempotency.IdempotencyStore.Outcome;
import org.junit.jupiter.api.Test;

/** A stored outcome: what it is and what it weighs against a store's bound. */
class IdempotencyStoreOutcomeTest {

  @Test
  void anOutcomeIsAFailureExactlyWhenItHasAFailureKind() {
    assertThat(Outcome.failure(FailureKind.BUSINESS, null).isFailure()).isTrue();
    assertThat(Outcome.success("null").isFailure()).isFalse();
  }

  @Test
  void anOutcomeWeighsTheUtf8BytesOfItsResultAndOfItsMessageTogether() {
    assertThat(Outcome.success("\"Zürich\"").size()).isEqualTo(9);
    assertThat(Outcome.failure(FailureKind.BUSINESS, "déclinée").size()).isEqualTo(10);
    assertThat(new Outcome("\"Zürich\"", FailureKind.BUSINESS, "déclinée").size()).isEqualTo(19);
    assertThat(Outcome.failure(FailureKind.BUSINESS, null).size()).isZero();
  }
}
