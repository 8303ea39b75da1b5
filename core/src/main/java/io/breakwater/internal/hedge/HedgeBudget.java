package io.breakwater.internal.hedge;

import java.util.concurrent.atomic.AtomicLongFieldUpdater;

/**
 * The hedge budget of one policy: a balance of micro-tokens in one atomic long. Every call deposits {@code ratio} of
 * a token, every hedge withdraws a whole one. It starts empty and holds at most {@link #CAPACITY_TOKENS} tokens, so
 * the hedges since it was made never exceed {@code ratio} × the calls, and a burst after a quiet spell is bounded.
 * A deposit is one atomic add (the balance may overshoot the capacity by concurrent deposits, which the next
 * withdrawal trims); no lock, no allocation.
 */
final class HedgeBudget {

  static final int CAPACITY_TOKENS = 10;
  private static final long TOKEN = 1_000_000L;
  private static final long CAPACITY = CAPACITY_TOKENS * TOKEN;

  private final long deposit;

  private volatile long balance;
  private static final AtomicLongFieldUpdater<HedgeBudget> BALANCE =
      AtomicLongFieldUpdater.newUpdater(HedgeBudget.class, "balance");

  HedgeBudget(double ratio) {
    this.deposit = Math.max(1L, Math.round(ratio * TOKEN));
  }

  /** A call was made. */
  void onRequest() {
    if (balance < CAPACITY) {
      BALANCE.getAndAdd(this, deposit);
    }
  }

  /** Takes a token for one hedge; false (and nothing taken) when less than one is left. */
  boolean tryAcquire() {
    for (;;) {
      long current = balance;
      long capped = Math.min(current, CAPACITY);
      if (capped < TOKEN) {
        return false;
      }
      if (BALANCE.compareAndSet(this, current, capped - TOKEN)) {
        return true;
      }
    }
  }

  /** The hedges the budget would allow now; may be approximate. */
  double level() {
    return Math.min(balance, CAPACITY) / (double) TOKEN;
  }
}
