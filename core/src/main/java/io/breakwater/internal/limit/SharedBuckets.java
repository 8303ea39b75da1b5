package io.breakwater.internal.limit;

import io.breakwater.internal.Durations;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.limit.BucketStore.Settlement;
import io.breakwater.internal.limit.BucketStore.Taken;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The buckets of a rate limit kept in a {@link BucketStore} shared by every instance: each take and each settlement is
 * one atomic step of the store, bounded by {@code operationTimeout}. What it knows between two answers is the store's
 * last one (what was left then, and the refill rates), from which it estimates how long a call would wait. When the
 * store does not answer, it is left alone for {@link SharedSettings#STORE_RETRY} ({@link StoreOutage}).
 */
final class SharedBuckets implements RateStore {

  private static final Logger LOG = Loggers.getLogger(SharedBuckets.class);

  private final RateSettings settings;
  private final SharedSettings shared;
  private final BucketStore store;
  private final StoreOutage outage = new StoreOutage();
  /** The store's last answer and when it came; guarded by {@code this}. */
  @Nullable
  private Taken last;
  private long lastAt;

  SharedBuckets(RateSettings settings, SharedSettings shared, BucketStore store) {
    this.settings = settings;
    this.shared = shared;
    this.store = store;
  }

  private Scheduler scheduler() {
    return settings.scheduler().get();
  }

  private long now() {
    return scheduler().now(TimeUnit.NANOSECONDS);
  }

  @Override
  public int tryTake(ThrottleSubscriber<?> call) {
    return BucketLevel.SHORT;   // every call asks the store from the queue
  }

  @Override
  public boolean takeLocked(ThrottleSubscriber<?> call, int lockFree, boolean alone) {
    return false;
  }

  @Override
  @Nullable
  public Taken take(long tokens, Consumer<Taken> answered, StoreOutage.Unreachable unreachable) {
    outage.ask(Mono.defer(() -> store.take(tokens)), shared.operationTimeout(), scheduler(), taken -> {
      synchronized (this) {
        last = taken;
        lastAt = now();
      }
      answered.accept(taken);
    }, unreachable);
    return null;
  }

  @Override
  public void settle(Settlement settlement, Runnable settled) {
    // deferred: a store that throws instead of answering with an error (a bug of its own) must not take the
    // signal of the call being settled with it
    Mono.defer(() -> store.settle(settlement)).timeout(shared.operationTimeout(), scheduler()).subscribe(null,
        e -> LOG.debug("Rate limit '{}': a call's settlement did not reach {} ({})", settings.name(), store,
            e.toString()), settled);
  }

  @Override
  public boolean fits(long tokens) {
    return settings.tokens() < 0 || tokens <= settings.tokens();
  }

  @Override
  public synchronized long nanosUntil(double requests, double tokens, boolean alone) {
    if (last == null || alone && last.taken()) {
      return 0;
    }
    long since = Math.max(0, now() - lastAt);
    double wait = Math.max(lack(requests, last.availableRequests(), last.requestsPerNano()),
        lack(tokens, last.availableTokens(), last.tokensPerNano()));
    if (!last.taken() && last.waitNanos() != Long.MAX_VALUE) {
      wait = Math.max(wait, last.waitNanos());
    }
    double left = wait - since;
    return left >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.max(0, left);
  }

  private static double lack(double need, double available, double perNano) {
    if (need <= available) {
      return 0;
    }
    return perNano > 0 ? (need - available) / perNano : Double.MAX_VALUE;
  }

  @Override
  public synchronized double cost(long tokens) {
    double requestRate = last != null ? last.requestsPerNano() : rate(settings.requests(), settings.requestInterval());
    double tokenRate = last != null ? last.tokensPerNano() : rate(settings.tokens(), settings.tokenInterval());
    return Math.max(requestRate > 0 && requestRate < Double.POSITIVE_INFINITY ? 1 / requestRate : 0,
        tokenRate > 0 && tokenRate < Double.POSITIVE_INFINITY ? tokens / tokenRate : 0);
  }

  private static double rate(long count, @Nullable Duration interval) {
    return count < 0 || interval == null ? Double.POSITIVE_INFINITY : count / (double) Saturating.nanos(interval);
  }

  @Override
  public synchronized long availableRequests() {
    return last == null ? configured(settings.requests()) : floor(last.availableRequests());
  }

  @Override
  public synchronized long availableTokens() {
    return last == null ? configured(settings.tokens()) : floor(last.availableTokens());
  }

  private static long configured(long count) {
    return count < 0 ? Long.MAX_VALUE : count;
  }

  private static long floor(double level) {
    return level >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.floor(Math.max(0, level));
  }

  @Override
  public long minPollNanos() {
    return 1_000_000L;
  }

  @Override
  public void unreachable(@Nullable Throwable error, List<? extends Turn> waiting) {
    // a waiter let through keeps null marks: its call goes through the local fallback
    outage.letThroughOrRefuse(error, now(), shared.failOpen(), LOG, "Rate limit '" + settings.name() + "'",
        settings.name(), store, "calls go through a local limit", waiting);
  }

  @Override
  public String levels() {
    return store.toString();
  }

  @Override
  public String where(String preposition) {
    return " " + preposition + " " + store;
  }

  @Override
  public String describe(int queued, RateSettings settings) {
    return "shared in " + store + ", queued here " + queued + ", maxWait " + Durations.format(settings.maxWait())
        + ", " + (shared.failOpen() ? "fails open" : "fails closed");
  }
}
