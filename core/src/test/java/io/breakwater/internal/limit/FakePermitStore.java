package io.breakwater.internal.limit;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/** A semaphore with expiring permits on a virtual clock, that can stop answering. */
final class FakePermitStore implements PermitStore {

  private final Scheduler clock;
  private final Map<String, Long> held = new HashMap<>();
  private final AtomicInteger ids = new AtomicInteger();
  private int permits;
  volatile boolean down;
  /** When set, the next tryAcquire answers only after this delay. */
  volatile Duration answerDelay = Duration.ZERO;
  int asked;
  int renewals;

  FakePermitStore(Scheduler clock) {
    this.clock = clock;
  }

  private <T> Mono<T> answer(java.util.function.Supplier<T> work) {
    if (down) {
      return Mono.never();
    }
    Mono<T> now = Mono.fromSupplier(work);
    return answerDelay.isZero() ? now : Mono.delay(answerDelay, clock).then(now);
  }

  @Override
  public Mono<Void> limit(int permits) {
    return answer(() -> {
      synchronized (this) {
        this.permits = permits;
      }
      return "ok";
    }).then();
  }

  @Override
  public Mono<String> tryAcquire(Duration lease) {
    return answer(() -> {
      synchronized (this) {
        asked++;
        expire();
        if (held.size() >= permits) {
          return null;
        }
        String id = "p" + ids.incrementAndGet();
        held.put(id, now() + lease.toNanos());
        return id;
      }
    });
  }

  @Override
  public Mono<Void> release(String id) {
    return answer(() -> {
      synchronized (this) {
        held.remove(id);
      }
      return "ok";
    }).then();
  }

  @Override
  public Mono<Boolean> renew(String id, Duration lease) {
    return answer(() -> {
      synchronized (this) {
        renewals++;
        expire();
        if (!held.containsKey(id)) {
          return false;
        }
        held.put(id, now() + lease.toNanos());
        return true;
      }
    });
  }

  synchronized int held() {
    expire();
    return held.size();
  }

  private void expire() {
    long now = now();
    held.values().removeIf(until -> until <= now);
  }

  private long now() {
    return clock.now(TimeUnit.NANOSECONDS);
  }

  @Override
  public String toString() {
    return "fake semaphore";
  }
}
