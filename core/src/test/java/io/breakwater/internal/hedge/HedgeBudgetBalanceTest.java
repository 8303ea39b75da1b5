package io.breakwater.internal.hedge;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The hedge budget's balance (docs/hedging.md, "budget"; {@link io.breakwater.hedge.HedgePolicy}'s "State"): every
 * call adds {@code budget} of a token, every hedge takes a whole one; it starts empty and holds at most 10 tokens.
 * {@link HedgeBudget#level()} says how many hedges it would allow now.
 */
class HedgeBudgetBalanceTest {

  static void calls(HedgeBudget budget, int calls) {
    for (int i = 0; i < calls; i++) {
      budget.onRequest();
    }
  }

  @Test
  void theBudgetStartsEmptyAndRefusesAHedge() {
    HedgeBudget budget = new HedgeBudget(1.0);
    assertThat(budget.level()).isZero();
    assertThat(budget.tryAcquire()).isFalse();
  }

  @Test
  void everyCallAddsItsShareOfATokenAndEveryHedgeTakesAWholeOne() {
    HedgeBudget budget = new HedgeBudget(0.25);
    calls(budget, 3);
    assertThat(budget.level()).isEqualTo(0.75);
    assertThat(budget.tryAcquire()).as("less than a token").isFalse();
    budget.onRequest();
    assertThat(budget.level()).isEqualTo(1.0);
    assertThat(budget.tryAcquire()).isTrue();
    assertThat(budget.level()).isZero();
    assertThat(budget.tryAcquire()).isFalse();
  }

  @Test
  void theBudgetHoldsAtMostTenTokensHoweverManyCallsWentBy() {
    HedgeBudget budget = new HedgeBudget(1.0);
    calls(budget, 25);
    assertThat(budget.level()).isEqualTo(HedgeBudget.CAPACITY_TOKENS);
    for (int i = 0; i < HedgeBudget.CAPACITY_TOKENS; i++) {
      assertThat(budget.tryAcquire()).as("hedge %d", i + 1).isTrue();
    }
    assertThat(budget.tryAcquire()).as("the eleventh").isFalse();
    assertThat(budget.level()).isZero();
  }
}
