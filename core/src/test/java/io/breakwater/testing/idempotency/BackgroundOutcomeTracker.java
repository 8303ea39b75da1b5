package io.breakwater.testing.idempotency;

import io.breakwater.idempotency.DelegatingStore;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;

/**
 * Counts, from outside {@code idempotentBy}, the outcomes being stored after their callers got their values: a
 * completion is in the background from the moment its caller gets the value ({@link #delivered}) until the store
 * answers it. Wrap the store with {@link #watch}; tests of the bound on background completions read {@link #most()}.
 */
public final class BackgroundOutcomeTracker {

  private static final int RUNNING = 1;
  private static final int DELIVERED = 2;
  private final Map<String, Integer> keys = new ConcurrentHashMap<>();
  private final AtomicInteger background = new AtomicInteger();
  private final AtomicInteger most = new AtomicInteger();
  private final AtomicInteger completions = new AtomicInteger();

  /** {@code store}, with every completion watched. */
  public IdempotencyStore watch(IdempotencyStore store) {
    return new DelegatingStore(store) {
      @Override
      public Mono<Boolean> complete(String key, String owner, Outcome outcome, Duration ttl) {
        return super.complete(key, owner, outcome, ttl)
            .doOnSubscribe(s -> started(key))
            // ended as soon as the answer is known, before the operator sees it
            .doOnNext(stored -> ended(key))
            .doOnError(error -> ended(key))
            .doOnCancel(() -> ended(key));
      }
    };
  }

  /** The caller of the call with {@code storeKey} ({@link IdempotencyPolicy#storeKey}) got its value. */
  public void delivered(String storeKey) {
    keys.computeIfPresent(storeKey, (k, state) -> {
      if ((state & RUNNING) != 0 && (state & DELIVERED) == 0) {
        most.accumulateAndGet(background.incrementAndGet(), Math::max);
        return state | DELIVERED;
      }
      return state;
    });
  }

  /** The most outcomes that were being stored at once after their callers got their values. */
  public int most() {
    return most.get();
  }

  /** Completions the store was asked for. */
  public int completions() {
    return completions.get();
  }

  private void started(String key) {
    completions.incrementAndGet();
    keys.merge(key, RUNNING, (a, b) -> a | b);
  }

  private void ended(String key) {
    keys.compute(key, (k, state) -> {
      if (state != null && (state & DELIVERED) != 0) {
        background.decrementAndGet();
      }
      return null;
    });
  }
}
