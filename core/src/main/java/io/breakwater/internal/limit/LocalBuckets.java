package io.breakwater.internal.limit;

import io.breakwater.internal.Durations;
import io.breakwater.internal.limit.BucketStore.Outcome;
import io.breakwater.internal.limit.BucketStore.Settlement;
import io.breakwater.internal.limit.BucketStore.Taken;
import io.breakwater.limit.ProviderRateLimits.Reading;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;

/**
 * The in-memory store of a rate limit: two token buckets ({@link RateBuckets}). A call takes its permits without a
 * lock, a compare-and-set on each bucket's level ({@link RateBuckets#tryTake}); so are the correction of its tokens
 * when it ends and the permits it gives back. Everything else (the queue's head, the provider's headers and 429s)
 * changes the buckets under this object's monitor, each section taking the levels from the lock-free path
 * ({@code refill}) and handing them back ({@code publish}) before it leaves. It answers every take at once.
 */
final class LocalBuckets implements RateStore {

  private final Supplier<Scheduler> clock;
  private final RateBuckets buckets;

  LocalBuckets(RateSettings settings) {
    this.clock = settings.scheduler();
    this.buckets = new RateBuckets(settings, now());
    buckets.publish();
  }

  private long now() {
    return clock.get().now(TimeUnit.NANOSECONDS);
  }

  @Override
  public int tryTake(ThrottleSubscriber<?> call) {
    return buckets.tryTake(call.estimate(), now(), call);
  }

  @Override
  public synchronized boolean takeLocked(ThrottleSubscriber<?> call, int lockFree, boolean alone) {
    long now = now();
    buckets.refill(now);
    if (lockFree == RateBuckets.GIVE_BACK_REQUEST) {
      buckets.giveBackRequest();
    }
    boolean taken = alone && buckets.canTake(call.estimate(), now);
    if (taken) {
      buckets.take(call.estimate());
      call.admitted(buckets.admitted(RateBuckets.REQUESTS), buckets.admitted(RateBuckets.TOKENS), now);
    }
    buckets.publish();
    return taken;
  }

  @Override
  public synchronized Taken take(long tokens, Consumer<Taken> answered, StoreOutage.Unreachable unreachable) {
    long now = now();
    buckets.refill(now);
    Taken answer;
    if (!buckets.fits(tokens)) {
      answer = new Taken(false, true, Long.MAX_VALUE, 0, 0, now, 0, 0, 0, 0);
    } else if (buckets.canTake(tokens, now)) {
      buckets.take(tokens);
      answer = new Taken(true, false, 0, buckets.admitted(RateBuckets.REQUESTS),
          buckets.admitted(RateBuckets.TOKENS), now, 0, 0, 0, 0);
    } else {
      answer = new Taken(false, false, buckets.nanosUntil(1, tokens, now), 0, 0, now, 0, 0, 0, 0);
    }
    buckets.publish();
    return answer;
  }

  @Override
  public void settle(Settlement s, Runnable settled) {
    Reading reading = s.reading();
    if (s.outcome() == Outcome.NEVER_SENT) {
      giveBack(s.estimate());
    } else if (s.outcome() == Outcome.REJECTED) {
      locked(now -> buckets.rejected(reading != null ? reading : Reading.NONE, s.estimate(), s.admittedRequests(),
          s.admittedTokens(), s.admittedAt(), now));
    } else if (reading == null) {
      correct(s.actual() - s.estimate());
    } else {
      locked(now -> {
        if (s.actual() >= 0) {   // a call that ended: charged what it used, as the shared limit's store does
          buckets.correct(s.actual() - s.estimate());
        }
        buckets.observe(reading, s.admittedRequests(), s.admittedTokens(), s.admittedAt(), now);
      });
    }
    settled.run();
  }

  /** Runs {@code change} on the buckets, refilled at the instant it is given, under the monitor. */
  private synchronized void locked(LongConsumer change) {
    long now = now();
    buckets.refill(now);
    change.accept(now);
    buckets.publish();
  }

  /** A call's tokens corrected by {@code delta}: without the lock when the levels are published. */
  private void correct(long delta) {
    if (!buckets.correctNow(delta, now())) {
      locked(now -> buckets.correct(delta));
    }
  }

  /** Gives back the permits of a call that never reached the provider. */
  private void giveBack(long tokens) {
    int given = buckets.giveBackNow(tokens, now());
    if (given == 0) {
      locked(now -> buckets.giveBack(tokens));
    } else if (given == 1) {
      locked(now -> buckets.correct(-tokens));
    }
  }

  @Override
  public boolean fits(long tokens) {
    return buckets.fits(tokens);
  }

  @Override
  public synchronized long nanosUntil(double requests, double tokens, boolean alone) {
    long now = now();
    buckets.refill(now);
    long eta = buckets.nanosUntil(requests, tokens, now);
    buckets.publish();
    return eta;
  }

  @Override
  public synchronized double cost(long tokens) {
    return buckets.cost(tokens);
  }

  @Override
  public long availableRequests() {
    return available(RateBuckets.REQUESTS);
  }

  @Override
  public long availableTokens() {
    return available(RateBuckets.TOKENS);
  }

  private synchronized long available(int d) {
    long now = now();
    buckets.refill(now);
    double level = buckets.available(d, now);
    buckets.publish();
    return level >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.floor(level);
  }

  @Override
  public long minPollNanos() {
    return 1;   // a head that cannot run now is looked at again no sooner than a nanosecond later
  }

  @Override
  public void unreachable(@Nullable Throwable error, List<? extends Turn> waiting) {
    throw new IllegalStateException("memory always answers", error);
  }

  @Override
  public String where(String preposition) {
    return "";
  }

  @Override
  public synchronized String levels() {
    buckets.refill(now());
    buckets.publish();
    return buckets.toString();
  }

  @Override
  public String describe(int queued, RateSettings settings) {
    return levels() + ", queued " + queued + ", maxWait " + Durations.format(settings.maxWait()) + ", maxQueue "
        + settings.maxQueue();
  }
}
