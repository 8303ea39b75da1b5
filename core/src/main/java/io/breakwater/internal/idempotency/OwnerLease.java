package io.breakwater.internal.idempotency;

import io.breakwater.idempotency.IdempotencyContext;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.StoreCallBound;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.ContextView;

/**
 * The claim an owner holds, as it knows it: confirmed until {@code confirmedUntil} (the instant the last claim or
 * renewal was sent, plus the lease), renewed every third of the lease by a watchdog while the owner runs. The
 * {@link IdempotencyContext} the side effect reads.
 */
final class OwnerLease implements IdempotencyContext {

  private final IdempotencyKey key;
  private final String owner;
  private final Scheduler clock;
  private final Duration lease;
  private final long leaseNanos;
  private final Disposable.Swap watchdog = Disposables.swap();
  private volatile long confirmedUntil;
  private volatile boolean tookOverExpired;
  private volatile boolean lost;
  private volatile boolean ended;
  private final AtomicInteger keysSent = new AtomicInteger();

  OwnerLease(IdempotencyKey key, String owner, Scheduler clock, Duration lease) {
    this.key = key;
    this.owner = owner;
    this.clock = clock;
    this.lease = lease;
    this.leaseNanos = Saturating.nanos(lease);
  }

  long now() {
    return clock.now(TimeUnit.NANOSECONDS);
  }

  /** The store granted the claim sent at {@code sentAt}. */
  void acquired(long sentAt, boolean tookOver) {
    this.tookOverExpired = tookOver;
    this.confirmedUntil = sentAt + leaseNanos;
  }

  /**
   * Renews the claim every third of the lease until {@link #end()} or until the store answers that it is lost. A
   * renewal that fails or times out changes nothing: the lease then runs down, and {@link #stillOwner()} says so.
   */
  void startRenewing(IdempotencyStore store, String storeKey, Duration bound, ContextView context) {
    Duration every = Duration.ofNanos(Math.max(1, leaseNanos / 3));
    // One-shot delays, not Flux.interval: a periodic task's cancellation may park on the scheduler's queue lock.
    watchdog.update(Mono.delay(every, clock)
        .then(Mono.defer(() -> {
          long sentAt = now();
          return StoreCallBound.within(store.renew(storeKey, owner, lease), bound, clock)
              .contextWrite(context)
              .doOnNext(renewed -> renewed(sentAt, renewed))
              .onErrorResume(error -> Mono.empty())
              .then();
        }))
        .repeat(() -> !lost && !ended)
        .subscribe());
  }

  private void renewed(long sentAt, boolean renewed) {
    if (!renewed) {
      lost = true;
    } else if (sentAt + leaseNanos > confirmedUntil) {
      confirmedUntil = sentAt + leaseNanos;
    }
  }

  /** The owner is done with the claim (released, completed, given up or cancelled): renewal stops. */
  void end() {
    ended = true;
    watchdog.dispose();
  }

  /** Nanoseconds of confirmed lease left, whatever the owner did since (bounds the completion's retries). */
  long confirmedNanosLeft() {
    return lost ? 0 : confirmedUntil - now();
  }

  @Override
  public IdempotencyKey key() {
    return key;
  }

  @Override
  public String ownerToken() {
    return owner;
  }

  @Override
  public boolean tookOverExpired() {
    return tookOverExpired;
  }

  @Override
  public Duration leaseRemaining() {
    long left = ended ? 0 : confirmedNanosLeft();
    return left <= 0 ? Duration.ZERO : Duration.ofNanos(left);
  }

  @Override
  public boolean stillOwner() {
    return !ended && confirmedNanosLeft() > leaseNanos / 3;
  }

  @Override
  public void markKeySent() {
    keysSent.incrementAndGet();
  }

  @Override
  public int keysSent() {
    return keysSent.get();
  }

  @Override
  public String toString() {
    return "IdempotencyContext[key=" + key + ", leaseRemaining=" + leaseRemaining() + ", stillOwner=" + stillOwner()
        + "]";
  }
}
