package io.breakwater.agent;

import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/** Token counts and waits from outside (a model's usage, a tool's exception) at the edges of a long. */
class HostileBudgetNumbersTest {

  static final Duration VERIFY = Duration.ofSeconds(5);
  static final Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE);

  @Test
  void spendingMoreTokensThanALongHoldsExhaustsTheBudgetInsteadOfWrappingRound() {
    StepVerifier.create(TaskBudget.spendTokens(10)
            .then(TaskBudget.spendTokens(Long.MAX_VALUE))
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofMinutes(1)).tokens(100).build())))
        .expectSubscription()
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(TokenBudgetExhaustedException.class,
            exhausted -> assertThat(exhausted.spent()).isEqualTo(Long.MAX_VALUE)))
        .verify(VERIFY);
  }

  @Test
  void aRateLimitWaitOfMinusForeverStillMakesTheExceptionAndItsMessage() {
    ToolRateLimitedException e = new ToolRateLimitedException("crm.lookup", Duration.ofSeconds(Long.MIN_VALUE));
    assertThat(e.getMessage()).isEqualTo("Tool 'crm.lookup' is rate-limited: wait -2562047788015215h30m before "
        + "calling it again");
  }
}
