package io.breakwater.internal.idempotency;

import io.breakwater.idempotency.IdempotencyPolicy;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * How many outcomes of one policy are being stored after their callers got their values, at most {@code max}. A call
 * that finds no room stores its outcome in its own flow instead: its caller waits for it, so a sustained load cannot
 * pile up completions faster than the store takes them. Lock-free; one per {@code IdempotencyPolicy}.
 */
public final class BackgroundCompletions {

  // bound by IdempotencyPolicy's static initialiser, which has run before any policy can be passed to of(..)
  @SuppressWarnings("NullAway.Init")
  private static volatile Function<IdempotencyPolicy, BackgroundCompletions> access;

  private final int max;
  private final AtomicInteger running = new AtomicInteger();

  public BackgroundCompletions(int max) {
    this.max = max;
  }

  /** Called once, by {@code IdempotencyPolicy}, which holds one per policy without exposing it. */
  public static void bindAccess(Function<IdempotencyPolicy, BackgroundCompletions> accessor) {
    access = accessor;
  }

  /** The background completions of {@code policy}'s calls. */
  public static BackgroundCompletions of(IdempotencyPolicy policy) {
    return access.apply(policy);
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
