package io.breakwater.internal.breaker;

import io.breakwater.deadline.CallTimeoutException;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * What a caller that sets adaptive per-attempt timeouts (a tool) tells the breakers around its attempts, through the
 * Reactor Context: whether the attempt now running had its timeout tightened below its upper bound by what the tool
 * learnt. A {@link CallTimeoutException} of such an attempt is our own cut, not proof that the dependency failed, so a
 * family breaker ignores it (its tool breaker still counts it). One per call, written before each attempt starts and
 * read when it ends; thread-safe.
 */
public final class AdaptiveCut {

  private static final Object KEY = AdaptiveCut.class;

  private volatile boolean tightened;

  /** Notes whether the attempt about to start has a learnt timeout below its upper bound. */
  public void attempt(boolean tightened) {
    this.tightened = tightened;
  }

  /** {@code context} with this call's note in it. */
  public Context putIn(Context context) {
    return context.put(KEY, this);
  }

  /** Whether {@code error}, ending an attempt of the call whose Context is {@code context}, is an adaptive cut. */
  static boolean cut(Throwable error, ContextView context) {
    if (!(error instanceof CallTimeoutException)) {
      return false;
    }
    AdaptiveCut note = context.getOrDefault(KEY, null);
    return note != null && note.tightened;
  }
}
