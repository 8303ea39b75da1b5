package io.breakwater.internal.limit;

import io.breakwater.internal.Saturating;
import io.breakwater.limit.ProviderRateLimits.Quota;
import io.breakwater.limit.ProviderRateLimits.Reading;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The two token buckets of a rate limit, requests and tokens, and what the provider said about them. Time is in
 * nanoseconds on the owner's clock.
 *
 * <p>Two ways in. The owner, under its lock, calls {@link #refill} and then reads and changes the buckets' fields (the
 * queue, the provider's headers, 429s); {@link #publish} then hands the levels to the lock-free path. Calls that find
 * their permits there take them without the lock ({@link #tryTake}, {@link #correctNow}, {@link #giveBackNow}): one
 * compare-and-set on each bucket's {@link BucketLevel} and one atomic add to the count of admitted permits. While the
 * owner holds the levels (between {@code refill} and {@code publish}) the lock-free path answers {@code RETIRED} and
 * its caller takes the owner's lock instead. Nobody calls {@code publish} (the Redis store's test double): every call
 * is under the owner's lock, as before.
 *
 * <ul>
 *   <li>A bucket holds at most {@code cap} permits and refills continuously at {@code cap / interval}; an unlimited
 *       bucket has an infinite cap and level.</li>
 *   <li>A provider's limit lowers {@code cap} (never below one permit) until {@code capUntil}, one interval after it
 *       last said so; then the configured cap comes back. Whether a call can ever run is judged on the configured
 *       cap, so no answer can make a call impossible.</li>
 *   <li>Until {@code pacedUntil} a bucket refills at {@code pacedRate} instead, the pace at which the provider said
 *       it would be full at its reset instant.</li>
 *   <li>{@code admitted} counts every permit ever taken, so that what a provider said when it admitted a call can be
 *       rebased to now: permits taken by calls admitted since are taken off its {@code remaining}.</li>
 *   <li>No permit is taken before {@code blockedUntil} (a provider's {@code retry-after}).</li>
 *   <li>{@code reserve} is how far this limit's view was above the provider's when a call was answered 429 anyway
 *       (other clients of the key took permits between two answers): the bucket's level, with the refused call's
 *       permits given back, minus the provider's {@code remaining} plus what refilled since the call was admitted. A
 *       call runs only when the bucket holds its weight on top of the reserve. The reserve keeps the largest such
 *       shortfall, fading by half every {@value #RESERVE_HALF_LIFE_SECONDS} s, and never more than half the
 *       bucket. It is an offset, not a rate: it delays calls once, it does not slow them down.</li>
 * </ul>
 *
 * <p>The Lua script of the Redis rate limit does the same arithmetic; keep them in step.
 */
final class RateBuckets {

  static final int REQUESTS = 0;
  static final int TOKENS = 1;
  /** How long every call stops after a 429 that says nothing else. */
  static final long DEFAULT_429_WAIT_NANOS = 1_000_000_000L;
  static final long RESERVE_HALF_LIFE_SECONDS = 300;
  static final double RESERVE_DECAY_PER_NANO = Math.log(2) / (RESERVE_HALF_LIFE_SECONDS * 1e9);

  private final double[] configured = new double[2];
  private final double[] interval = new double[2];
  private final double[] cap = new double[2];
  /** Until when a provider's limit below the configured one holds; then the configured limit comes back. */
  private final long[] capUntil = new long[2];
  private final double[] level = new double[2];
  private final double[] pacedRate = new double[2];
  private final long[] pacedUntil = new long[2];
  /** Every permit ever taken, through {@link #ADMITTED}: the lock-free path adds to them. */
  @SuppressWarnings("unused")
  private volatile long admittedRequests;
  @SuppressWarnings("unused")
  private volatile long admittedTokens;
  private final double[] reserve = new double[2];
  private final long[] reserveAt = new long[2];
  private long last;
  private long blockedUntil;
  /** The levels as the lock-free path sees them; {@code null} while the owner holds them. */
  @Nullable
  private volatile Frame frame;

  /** What {@link #publish} hands to the lock-free path: both buckets and the owner's {@code retry-after}. */
  private record Frame(BucketLevel requests, BucketLevel tokens, long blockedUntil) {}

  private static final VarHandle ADMITTED_REQUESTS;
  private static final VarHandle ADMITTED_TOKENS;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      ADMITTED_REQUESTS = lookup.findVarHandle(RateBuckets.class, "admittedRequests", long.class);
      ADMITTED_TOKENS = lookup.findVarHandle(RateBuckets.class, "admittedTokens", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  RateBuckets(RateSettings settings, long now) {
    init(REQUESTS, settings.requests(), settings.requestInterval());
    init(TOKENS, settings.tokens(), settings.tokenInterval());
    this.last = now;
    this.blockedUntil = now;
    this.pacedUntil[REQUESTS] = now;
    this.pacedUntil[TOKENS] = now;
    this.capUntil[REQUESTS] = now;
    this.capUntil[TOKENS] = now;
  }

  private void init(int d, long count, @Nullable Duration every) {
    configured[d] = count < 0 ? Double.POSITIVE_INFINITY : count;
    interval[d] = Saturating.nanos(every != null ? every : RateSettings.LEARNT_INTERVAL);
    cap[d] = configured[d];
    level[d] = configured[d];
  }

  /**
   * Adds what refilled since the last call; a clock that went back changes nothing. After {@link #publish}, first
   * takes the levels back from the lock-free path. The owner's lock is held.
   */
  void refill(long now) {
    Frame f = frame;
    if (f != null) {
      frame = null;
      level[REQUESTS] = f.requests().retire(now);
      level[TOKENS] = f.tokens().retire(now);
      last = now - f.requests().origin() > 0 ? now : f.requests().origin();
      restoreCaps(now);
      return;
    }
    if (now - last <= 0) {
      restoreCaps(now);
      return;
    }
    for (int d = 0; d < 2; d++) {
      if (level[d] < cap[d]) {
        long from = last;
        if (pacedUntil[d] - from > 0) {
          long to = now - pacedUntil[d] < 0 ? now : pacedUntil[d];
          level[d] += pacedRate[d] * (to - from);
          from = to;
        }
        if (now - from > 0) {
          level[d] += rate(d) * (now - from);
        }
        if (level[d] > cap[d]) {
          level[d] = cap[d];
        }
      }
    }
    last = now;
    restoreCaps(now);
  }

  /**
   * Gives back the configured limit (unlimited for a limit learnt from the provider) once a provider's lower one has
   * not been repeated for an interval: one answer ({@code x-ratelimit-limit-tokens: 1} from a hostile proxy) lowers
   * the cap for a while, never for good.
   */
  private void restoreCaps(long now) {
    for (int d = 0; d < 2; d++) {
      if (cap[d] < configured[d] && now - capUntil[d] >= 0) {
        cap[d] = configured[d];
        if (Double.isInfinite(cap[d])) {
          level[d] = cap[d];
        }
      }
    }
  }

  private double rate(int d) {
    return cap[d] / interval[d];
  }

  /** Whether {@code tokens} (and one request) can be taken at {@code now}, on top of the reserve; refill first. */
  boolean canTake(long tokens, long now) {
    return now - blockedUntil >= 0 && level[REQUESTS] - reserve(REQUESTS, now) >= 1
        && level[TOKENS] - reserve(TOKENS, now) >= tokens;
  }

  /** The reserve of {@code d} at {@code now}: the last one, faded since it was set. */
  double reserve(int d, long now) {
    double r = reserve[d];
    return r == 0 ? 0 : r * Math.exp(-RESERVE_DECAY_PER_NANO * Math.max(0, now - reserveAt[d]));
  }

  void take(long tokens) {
    level[REQUESTS] -= 1;
    level[TOKENS] -= tokens;
    ADMITTED_REQUESTS.getAndAdd(this, 1L);
    ADMITTED_TOKENS.getAndAdd(this, tokens);
  }

  /** Hands the levels to the lock-free path, after the owner's {@link #refill} and changes; its lock is held. */
  void publish() {
    if (frame == null) {
      frame = new Frame(publish(REQUESTS), publish(TOKENS), blockedUntil);
    }
  }

  private BucketLevel publish(int d) {
    return new BucketLevel(level[d], last, cap[d], rate(d), pacedRate[d], pacedUntil[d], reserve[d], reserveAt[d]);
  }

  /**
   * Without the owner's lock: takes one request and {@code tokens} for {@code call} if the buckets hold them on top
   * of their reserves at {@code now}, and records where the counts of admitted permits stood:
   * {@link BucketLevel#DONE}, {@link BucketLevel#SHORT}, or {@link BucketLevel#RETIRED} (ask under the owner's lock;
   * nothing was taken).
   */
  int tryTake(long tokens, long now, ThrottleSubscriber<?> call) {
    Frame f = frame;
    if (f == null) {
      return BucketLevel.RETIRED;
    }
    if (now - f.blockedUntil() < 0) {
      return BucketLevel.SHORT;
    }
    int requests = f.requests().take(1, now);
    if (requests != BucketLevel.DONE) {
      return requests;
    }
    int taken = f.tokens().take(tokens, now);
    if (taken != BucketLevel.DONE) {
      if (f.requests().add(1, now) == BucketLevel.RETIRED) {
        return GIVE_BACK_REQUEST;
      }
      return taken;
    }
    long r = (long) ADMITTED_REQUESTS.getAndAdd(this, 1L) + 1;
    long t = tokens == 0 ? (long) ADMITTED_TOKENS.getVolatile(this)
        : (long) ADMITTED_TOKENS.getAndAdd(this, tokens) + tokens;
    call.admitted(r, t, now);
    return BucketLevel.DONE;
  }

  /**
   * {@link #tryTake}'s answer when the tokens were not there and the request it took could not be given back
   * without the owner's lock: the caller gives it back with {@link #giveBackRequest} under the lock.
   */
  static final int GIVE_BACK_REQUEST = -2;

  /** Gives back one request; refill first. */
  void giveBackRequest() {
    level[REQUESTS] = Math.min(cap[REQUESTS], level[REQUESTS] + 1);
  }

  /** Without the owner's lock: {@link #correct}; false when it must be done under the lock. */
  boolean correctNow(double delta, long now) {
    Frame f = frame;
    return f != null && f.tokens().add(-delta, now) == BucketLevel.DONE;
  }

  /**
   * Without the owner's lock: {@link #giveBack}. Answers what it gave back: 2 for everything, 1 for the request
   * only (give the tokens back with {@code correct(-tokens)} under the lock), 0 for nothing (give everything back
   * under the lock).
   */
  int giveBackNow(long tokens, long now) {
    Frame f = frame;
    if (f == null) {
      return 0;
    }
    if (f.requests().add(1, now) != BucketLevel.DONE) {
      return 0;
    }
    return f.tokens().add(tokens, now) == BucketLevel.DONE ? 2 : 1;
  }

  /**
   * Whether a call of {@code tokens} could ever run: the configured token bucket holds that many when full. A
   * provider's lower limit only delays it (until the configured limit comes back): it never makes it impossible.
   */
  boolean fits(long tokens) {
    return tokens <= configured[TOKENS] && configured[REQUESTS] >= 1;
  }

  double admitted(int d) {
    return (long) (d == REQUESTS ? ADMITTED_REQUESTS : ADMITTED_TOKENS).getVolatile(this);
  }

  /** What could be taken now on top of the reserve, never below zero; refill first. */
  double available(int d, long now) {
    return Math.max(0, level[d] - reserve(d, now));
  }

  /**
   * Nanoseconds from {@code now} until the buckets hold {@code requests} and {@code tokens} (refill first); 0 when
   * they do now, {@link Long#MAX_VALUE} when they never will.
   */
  long nanosUntil(double requests, double tokens, long now) {
    long wait = Math.max(0, blockedUntil - now);
    wait = Math.max(wait, until(REQUESTS, requests + reserve(REQUESTS, now), now));
    return Math.max(wait, until(TOKENS, tokens + reserve(TOKENS, now), now));
  }

  private long until(int d, double need, long now) {
    double deficit = need - level[d];
    if (deficit <= 0) {
      return 0;
    }
    if (need > cap[d] && cap[d] < configured[d]) {
      // more than a provider's lower limit holds: after it ends, what is missing refills at the configured rate
      long restored = Math.max(0, capUntil[d] - now);
      double configuredRate = configured[d] / interval[d];
      return Double.isInfinite(configuredRate) ? restored
          : Saturating.add(restored, ceil(Math.max(0, need - cap[d]) / configuredRate));
    }
    long from = now;
    if (pacedUntil[d] - now > 0 && pacedRate[d] > 0) {
      double paced = pacedRate[d] * (pacedUntil[d] - now);
      if (paced >= deficit) {
        return ceil(deficit / pacedRate[d]);
      }
      deficit -= paced;
      from = pacedUntil[d];
    }
    double base = rate(d);
    if (!(base > 0)) {
      return Long.MAX_VALUE;
    }
    return Saturating.add(from - now, ceil(deficit / base));
  }

  private static long ceil(double nanos) {
    return nanos >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.ceil(nanos);
  }

  /** Corrects a call's tokens after it ended: {@code delta} more were used (negative: fewer). */
  void correct(double delta) {
    level[TOKENS] = Math.min(cap[TOKENS], level[TOKENS] - delta);
  }

  /** Gives back what a call took that never reached the provider. */
  void giveBack(long tokens) {
    level[REQUESTS] = Math.min(cap[REQUESTS], level[REQUESTS] + 1);
    level[TOKENS] = Math.min(cap[TOKENS], level[TOKENS] + tokens);
  }

  /**
   * Applies what the provider said in the answer to a call admitted when {@code admitted} stood at
   * {@code admittedRequests} and {@code admittedTokens} (refill first).
   */
  void observe(Reading reading, double admittedRequests, double admittedTokens, long admittedAt, long now) {
    apply(REQUESTS, reading.requests(), admitted(REQUESTS) - admittedRequests, admittedAt, now, false);
    apply(TOKENS, reading.tokens(), admitted(TOKENS) - admittedTokens, admittedAt, now, false);
    if (reading.retryAfter() != null) {
      block(Saturating.add(now, Saturating.nanos(reading.retryAfter())));
    }
  }

  /**
   * After a 429 to a call of {@code tokens}: its permits come back (the provider did not count it), the shortfall
   * goes to the reserve, what it said applies, and no call runs until its {@code retry-after} (1 s without one).
   */
  void rejected(Reading reading, long tokens, double admittedRequests, double admittedTokens, long admittedAt,
      long now) {
    giveBack(tokens);
    apply(REQUESTS, reading.requests(), admitted(REQUESTS) - admittedRequests, admittedAt, now, true);
    apply(TOKENS, reading.tokens(), admitted(TOKENS) - admittedTokens, admittedAt, now, true);
    if (reading.retryAfter() != null) {
      block(Saturating.add(now, Saturating.nanos(reading.retryAfter())));
    }
    if (reading.requests() == null && reading.tokens() == null) {
      level[REQUESTS] = Math.min(level[REQUESTS], 0);
      level[TOKENS] = Math.min(level[TOKENS], 0);
    }
    if (reading.retryAfter() == null) {
      block(Saturating.add(now, DEFAULT_429_WAIT_NANOS));
    }
  }

  private void block(long until) {
    if (until - blockedUntil > 0) {
      blockedUntil = until;
    }
  }

  private void apply(int d, @Nullable Quota q, double takenSince, long admittedAt, long now, boolean shortfall) {
    if (q == null) {
      return;
    }
    if (q.limit() != Quota.UNKNOWN) {
      // at least one permit (a limit of 0 would stop every call), for one interval unless the provider repeats it
      double limit = Math.min(configured[d], Math.max(1, q.limit()));
      if (Double.isInfinite(cap[d])) {
        level[d] = limit;   // a limit learnt for the first time starts full; remaining lowers it below
      }
      cap[d] = limit;
      level[d] = Math.min(level[d], limit);
      capUntil[d] = Saturating.add(now, (long) Math.min(interval[d], Long.MAX_VALUE));
    }
    if (Double.isInfinite(cap[d]) || q.remaining() == Quota.UNKNOWN) {
      return;
    }
    double remaining = q.remaining() - takenSince;
    if (shortfall) {
      double gap = level[d] - (remaining + rate(d) * Math.max(0, now - admittedAt));
      double faded = reserve(d, now);
      reserve[d] = gap > faded ? Math.min(gap, cap[d] / 2) : faded;
      reserveAt[d] = now;
    }
    level[d] = Math.min(level[d], remaining);
    double providerLimit = q.limit() != Quota.UNKNOWN ? q.limit() : cap[d];
    Duration reset = q.reset();
    if (reset != null && !reset.isZero() && q.remaining() < providerLimit) {
      long resetNanos = Saturating.nanos(reset);
      pacedRate[d] = Math.min(rate(d), (providerLimit - q.remaining()) / (double) resetNanos);
      pacedUntil[d] = Saturating.add(now, resetNanos);
    } else {
      pacedUntil[d] = now;
    }
  }

  /** The permits a call of {@code tokens} costs, in nanoseconds of the scarcer bucket: the fair queue's unit. */
  double cost(long tokens) {
    double requestRate = rate(REQUESTS);
    double tokenRate = rate(TOKENS);
    return Math.max(requestRate > 0 ? 1 / requestRate : 0, tokenRate > 0 ? tokens / tokenRate : 0);
  }

  @Override
  public String toString() {
    return "requests " + describe(REQUESTS) + ", tokens " + describe(TOKENS);
  }

  private String describe(int d) {
    return Double.isInfinite(cap[d]) ? "unlimited" : (long) Math.floor(level[d]) + "/" + (long) cap[d];
  }
}
