package io.breakwater.internal.limit;

import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/** The buckets of {@link RateBuckets} as a store, on a virtual clock, that can stop answering. */
final class FakeBucketStore implements BucketStore {

  private final Scheduler clock;
  private final RateBuckets buckets;
  volatile boolean down;
  int takes;
  int settlements;

  FakeBucketStore(Scheduler clock, RateSettings settings) {
    this.clock = clock;
    this.buckets = new RateBuckets(settings, clock.now(TimeUnit.NANOSECONDS));
  }

  @Override
  public Mono<Taken> take(long tokens) {
    if (down) {
      return Mono.never();
    }
    return Mono.fromSupplier(() -> {
      synchronized (this) {
        takes++;
        long now = clock.now(TimeUnit.NANOSECONDS);
        buckets.refill(now);
        if (!buckets.fits(tokens)) {
          return taken(false, true, Long.MAX_VALUE, now);
        }
        if (buckets.canTake(tokens, now)) {
          buckets.take(tokens);
          return taken(true, false, 0, now);
        }
        return taken(false, false, buckets.nanosUntil(1, tokens, now), now);
      }
    });
  }

  private Taken taken(boolean taken, boolean tooHeavy, long wait, long now) {
    return new Taken(taken, tooHeavy, wait, buckets.admitted(RateBuckets.REQUESTS),
        buckets.admitted(RateBuckets.TOKENS), now, buckets.available(RateBuckets.REQUESTS, now),
        buckets.available(RateBuckets.TOKENS, now), 1.0 / 1e9, 100.0 / 1e9);
  }

  @Override
  public Mono<Void> settle(Settlement s) {
    if (down) {
      return Mono.never();
    }
    return Mono.<Void>fromRunnable(() -> {
      synchronized (this) {
        settlements++;
        long now = clock.now(TimeUnit.NANOSECONDS);
        buckets.refill(now);
        switch (s.outcome()) {
          case NEVER_SENT -> buckets.giveBack(s.estimate());
          case REJECTED -> buckets.rejected(s.reading(), s.estimate(), s.admittedRequests(), s.admittedTokens(),
              s.admittedAt(), now);
          case ENDED -> {
            if (s.actual() >= 0) {
              buckets.correct(s.actual() - s.estimate());
            }
            if (s.reading() != null) {
              buckets.observe(s.reading(), s.admittedRequests(), s.admittedTokens(), s.admittedAt(), now);
            }
          }
        }
      }
    });
  }

  synchronized long availableTokens() {
    long now = clock.now(TimeUnit.NANOSECONDS);
    buckets.refill(now);
    return (long) buckets.available(RateBuckets.TOKENS, now);
  }

  @Override
  public String toString() {
    return "fake buckets";
  }
}
