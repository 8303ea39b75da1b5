package io.breakwater.internal.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;

import io.breakwater.retry.RetryBudget;
import org.junit.jupiter.api.Test;

/**
 * The edges of {@link TokenBucketRetryBudget} that the mutation run (docs/reliability.md, "Mutation testing") found
 * untested: the end points of the ratio, what a bucket says it is (the text the budget's log lines quote), and the
 * unlimited budget's level and name.
 */
class TokenBucketRetryBudgetBoundariesTest {

  @Test
  void aRatioOfExactlyZeroOrOneIsValid() {
    assertThatNoException().isThrownBy(() -> TokenBucketRetryBudget.validate(0.0, 0, 1));
    assertThatNoException().isThrownBy(() -> TokenBucketRetryBudget.validate(1.0, 0, 1));
    TokenBucketRetryBudget everyCall = new TokenBucketRetryBudget(1.0, 0, 1);
    assertThat(everyCall.tryAcquireNow(0)).isTrue();
    everyCall.onRequest();
    assertThat(everyCall.tryAcquireNow(0)).as("a ratio of 1 deposits a whole token per call").isTrue();
  }

  @Test
  void aBucketSaysItsRatioFloorAndCapacityInTokens() {
    assertThat(RetryBudget.ratio(0.1, 5)).hasToString("RetryBudget.ratio(0.1, 5.0/s, capacity 50)");
    assertThat(new TokenBucketRetryBudget(0.15, 0, 10)).hasToString("RetryBudget.ratio(0.15, 0.0/s, capacity 10)");
  }

  @Test
  void theUnlimitedBudgetHoldsInfinitelyManyTokensAndSaysSo() {
    assertThat(RetryBudget.unlimited().level()).isEqualTo(Double.POSITIVE_INFINITY);
    assertThat(RetryBudget.unlimited()).hasToString("RetryBudget.unlimited()");
    assertThat(RetryBudget.unlimited().tryAcquire(0).block()).isTrue();
  }
}
