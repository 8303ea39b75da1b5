package io.breakwater.internal.idempotency;

import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.internal.PrivateFields;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many outcomes of one policy are being stored after their callers got their values, at most {@code max}. A call
 * that finds no room stores its outcome in its own flow instead: its caller waits for it, so a sustained load cannot
 * pile up completions faster than the store takes them. Lock-free; one per {@code IdempotencyPolicy}.
 */
public final class BackgroundCompletions {

  /** {@link IdempotencyPolicy}'s private {@code backgroundCompletions} field, which no method of the policy exposes. */
  private static final VarHandle OF_POLICY =
      PrivateFields.handle(IdempotencyPolicy.class, "backgroundCompletions", BackgroundCompletions.class);

  private final int max;
  private final AtomicInteger running = new AtomicInteger();

  public BackgroundCompletions(int max) {
    this.max = max;
  }

  /** The background completions of {@code policy}'s calls. */
  public static BackgroundCompletions of(IdempotencyPolicy policy) {
    return (BackgroundCompletions) OF_POLICY.get(policy);
  }

  /** Takes a place for one completion in the background; {@code false} when all {@code max} are taken. */
  boolean tryStart() {
    for (;;) {
      int now = running.get();
      if (now >= max) {
        return false;
      }
      if (running.compareAndSet(now, now + 1)) {
        return true;
      }
    }
  }

  /** Gives back the place of a completion that {@link #tryStart()} admitted, once it is stored, fenced or given up. */
  void finished() {
    running.decrementAndGet();
  }

  /** Completions running in the background now. */
  public int running() {
    return running.get();
  }
}
