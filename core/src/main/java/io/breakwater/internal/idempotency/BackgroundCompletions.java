package io.breakwater.internal.idempotency;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many outcomes of one policy are being stored after their callers got their values, at most {@code max}. A call
 * that finds no room stores its outcome in its own flow instead: its caller waits for it, so a sustained load cannot
 * pile up completions faster than the store takes them. Lock-free; one per {@code IdempotencyPolicy}.
 */
public final class BackgroundCompletions {

  private final int max;
  private final AtomicInteger running = new AtomicInteger();

  public BackgroundCompletions(int max) {
    this.max = max;
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
