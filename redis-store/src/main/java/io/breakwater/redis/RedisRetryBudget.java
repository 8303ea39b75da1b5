package io.breakwater.redis;

import io.breakwater.internal.Saturating;
import io.breakwater.internal.retry.TokenBucketRetryBudget;
import io.breakwater.retry.RetryBudget;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.redisson.api.RScript;
import org.redisson.api.RScriptReactive;
import org.redisson.api.RedissonReactiveClient;
import org.redisson.client.RedisConnectionException;
import org.redisson.client.codec.StringCodec;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A per-dependency {@link RetryBudget} shared by every instance through Redis: one token bucket per dependency,
 * {@code bw:retry:{<dependency>}}, refilled by a share of all instances' calls and by a floor per second measured
 * with Redis {@code TIME}, not the clients' clocks.
 *
 * <pre>{@code
 * RetryBudget flights = RedisRetryBudget.builder(redisson, "flights").build();   // 15 % of calls, 10 tokens
 * RetryPolicy policy = RetryPolicy.builder().name("flights").budget(flights).build();
 * }</pre>
 *
 * <ul>
 *   <li><b>Success path: no round trip.</b> {@link #onRequest()} adds to a local counter (lock-free, no
 *       allocation); the deposits are flushed to Redis in a batch with the next retry request, and every
 *       {@code flushInterval} (default 1 s) while there are any.</li>
 *   <li><b>Failure path: one round trip.</b> {@link #tryAcquire(long)} is one script that adds the pending deposits
 *       and the floor accrued since the last visit, then withdraws a token if there is one.</li>
 *   <li><b>Fails closed.</b> If Redis cannot answer within {@code operationTimeout} (default 500 ms), the retry is
 *       refused: an outage of the budget's store never becomes a retry storm. The deposits of a visit whose answer
 *       did not come are dropped, since the script may have applied them (they are kept only when the command
 *       provably never reached Redis): the budget may undercount, never count twice.</li>
 * </ul>
 *
 * <p>Thread-safe. {@link #close()} stops the periodic flush.
 */
public final class RedisRetryBudget implements RetryBudget, AutoCloseable {

  private static final Logger LOG = Loggers.getLogger(RedisRetryBudget.class);
  private static final long TOKEN = 1000L;

  static final String BUCKET = """
      if redis.replicate_commands then redis.replicate_commands() end
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      local capacity = tonumber(ARGV[1])
      local floorPerMilli = tonumber(ARGV[2])
      local deposit = tonumber(ARGV[3])
      local take = tonumber(ARGV[4])
      local r = redis.call('HMGET', KEYS[1], 'tokens', 'last')
      local tokens = tonumber(r[1]) or capacity
      local last = tonumber(r[2]) or now
      if now > last then tokens = tokens + (now - last) * floorPerMilli end
      tokens = math.min(capacity, tokens + deposit)
      local granted = 0
      if take > 0 and tokens >= take then
        tokens = tokens - take
        granted = 1
      end
      redis.call('HSET', KEYS[1], 'tokens', tostring(math.floor(tokens)), 'last', tostring(now))
      redis.call('PEXPIRE', KEYS[1], ARGV[5])
      return {granted, math.floor(tokens)}
      """;

  private final RScriptReactive scripts;
  private final String key;
  private final String dependency;
  private final long depositMilli;
  private final double minPerSecond;
  private final long capacityMilli;
  private final Duration operationTimeout;
  private final Duration idleExpiry;
  private final LongAdder pendingRequests = new LongAdder();
  /** The flush timer's scheduler, Reactor's parallel one (a test's virtual clock when one is installed). */
  private final Scheduler flushScheduler = Schedulers.parallel();
  private final long flushNanos;
  /** The next flush, a one-shot task: cancelling a periodic one may park on the executor's queue lock. */
  private volatile Disposable nextFlush = Disposables.disposed();
  private volatile boolean closed;
  private volatile long lastKnownMilli;

  private RedisRetryBudget(Builder b) {
    this.scripts = b.redisson.getScript(StringCodec.INSTANCE);
    this.dependency = b.dependency;
    this.key = b.keyPrefix + "{" + b.dependency + "}";
    this.depositMilli = Math.round(b.ratio * TOKEN);
    this.minPerSecond = b.minRetriesPerSecond;
    this.capacityMilli = Math.round(b.capacity * TOKEN);
    this.operationTimeout = Saturating.delay(b.operationTimeout);   // forever: as good as none
    this.idleExpiry = b.idleExpiry;
    this.lastKnownMilli = capacityMilli;
    this.flushNanos = Saturating.delayNanos(Saturating.nanos(b.flushInterval));
    scheduleFlush();
  }

  public static Builder builder(RedissonReactiveClient redisson, String dependency) {
    return new Builder(redisson, dependency);
  }

  @Override
  public void onRequest() {
    if (depositMilli != 0) {
      pendingRequests.increment();
    }
  }

  /** One round trip: flushes this instance's deposits, refills the floor by Redis time, withdraws a token. */
  @Override
  public Mono<Boolean> tryAcquire(long nowMillis) {
    return visit(TOKEN).map(granted -> granted == 1L).onErrorResume(e -> {
      LOG.warn("Retry budget '{}' unavailable in Redis; refusing the retry", dependency, e);
      return Mono.just(Boolean.FALSE);
    });
  }

  private Mono<Long> visit(long take) {
    return Mono.defer(() -> {
      long requests = pendingRequests.sumThenReset();
      return scripts.<List<Object>>eval(key, RScript.Mode.READ_WRITE, BUCKET, RScript.ReturnType.LIST, List.of(key),
              Long.toString(capacityMilli), Double.toString(minPerSecond / 1000.0 * TOKEN),
              Long.toString(requests * depositMilli), Long.toString(take), Long.toString(Saturating.millis(idleExpiry)))
          .timeout(operationTimeout)
          .doOnError(e -> {
            if (neverSent(e)) {
              pendingRequests.add(requests);   // kept for the next visit
            }   // else ambiguous (the script may have run): dropped, so deposits are never counted twice
          })
          .map(reply -> {
            lastKnownMilli = ((Number) reply.get(1)).longValue();
            return ((Number) reply.get(0)).longValue();
          });
    });
  }

  /**
   * Whether {@code error} proves the script never reached Redis (no connection, or the command could not be
   * written). A timeout proves nothing: the script may have run, and its reply been late.
   */
  private static boolean neverSent(Throwable error) {
    return error instanceof RedisConnectionException;
  }

  private void flushIfPending() {
    if (pendingRequests.sum() > 0) {
      visit(0).subscribe(null, e -> LOG.debug("Retry budget '{}': deposits kept for the next flush", dependency, e));
    }
  }

  /** Arms the next flush, one {@code flushInterval} from now, unless closed. */
  private void scheduleFlush() {
    if (closed) {
      return;
    }
    try {
      Disposable next = flushScheduler.schedule(this::flushAndScheduleNext, flushNanos, TimeUnit.NANOSECONDS);
      nextFlush = next;
      if (closed) {
        next.dispose();   // closed while it was being armed
      }
    } catch (RejectedExecutionException e) {
      // The scheduler is shut down: deposits now travel only with the retries' own visits.
      LOG.warn("Retry budget '{}': periodic flushes stopped, the scheduler refused the next one", dependency);
    }
  }

  private void flushAndScheduleNext() {
    try {
      flushIfPending();
    } finally {
      scheduleFlush();
    }
  }

  /** The tokens Redis reported at the last visit; approximate between visits. */
  @Override
  public double level() {
    return lastKnownMilli / (double) TOKEN;
  }

  @Override
  public void close() {
    closed = true;
    nextFlush.dispose();
  }

  @Override
  public String toString() {
    return "RedisRetryBudget{" + key + ", ratio=" + depositMilli / (double) TOKEN + ", floor=" + minPerSecond
        + "/s, capacity=" + capacityMilli / TOKEN + "}";
  }

  /** Builds a {@link RedisRetryBudget}; {@link #build()} validates and says what to change. */
  public static final class Builder {
    private final RedissonReactiveClient redisson;
    private final String dependency;
    private double ratio = TokenBucketRetryBudget.DEFAULT_RATIO;
    private double minRetriesPerSecond = 0;
    private @Nullable Double capacityOverride;
    private double capacity;
    private String keyPrefix = "bw:retry:";
    private Duration operationTimeout = Duration.ofMillis(500);
    private Duration flushInterval = Duration.ofSeconds(1);
    private Duration idleExpiry = Duration.ofHours(1);

    private Builder(RedissonReactiveClient redisson, String dependency) {
      this.redisson = Objects.requireNonNull(redisson, "redisson");
      this.dependency = Objects.requireNonNull(dependency, "dependency");
    }

    /** The share of calls that may be retried, across all instances; default 0.15, as {@code RetryBudget.ofDefaults()}. */
    public Builder ratio(double ratio) {
      this.ratio = ratio;
      return this;
    }

    /**
     * Retries allowed per second whatever the traffic, across all instances; default 0 (a floor lets a full outage
     * at low traffic be mostly retries).
     */
    public Builder minRetriesPerSecond(double minRetriesPerSecond) {
      this.minRetriesPerSecond = minRetriesPerSecond;
      return this;
    }

    /** The most tokens the bucket holds; default 10 seconds of the floor, at least 10 (so 10 with no floor). */
    public Builder capacity(double capacity) {
      this.capacityOverride = capacity;
      return this;
    }

    public Builder keyPrefix(String keyPrefix) {
      this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
      return this;
    }

    /** The longest a retry waits for the budget's answer before it is refused; default 500 ms. */
    public Builder operationTimeout(Duration operationTimeout) {
      this.operationTimeout = Objects.requireNonNull(operationTimeout, "operationTimeout");
      return this;
    }

    /** How often pending deposits are flushed when no retry carries them; default 1 s, at least 1 ms. */
    public Builder flushInterval(Duration flushInterval) {
      this.flushInterval = Objects.requireNonNull(flushInterval, "flushInterval");
      return this;
    }

    public RedisRetryBudget build() {
      if (dependency.isBlank() || dependency.contains("{") || dependency.contains("}")) {
        throw new IllegalArgumentException("Retry budget dependency '" + dependency
            + "' is blank or contains a brace: name the dependency, e.g. 'flights'");
      }
      capacity = capacityOverride != null ? capacityOverride
          : TokenBucketRetryBudget.defaultCapacity(minRetriesPerSecond);
      TokenBucketRetryBudget.validate(ratio, minRetriesPerSecond, capacity);
      for (Duration d : List.of(operationTimeout, flushInterval)) {
        if (d.isNegative() || d.isZero()) {
          throw new IllegalArgumentException("Retry budget durations must be positive, got " + d);
        }
      }
      if (flushInterval.compareTo(Duration.ofMillis(1)) < 0) {
        throw new IllegalArgumentException("Retry budget '" + dependency + "' flushInterval is " + flushInterval
            + ": give 1 ms or more (each flush may be a round trip to Redis; the default is 1 s)");
      }
      return new RedisRetryBudget(this);
    }
  }
}
