package io.breakwater.internal.limit;

import io.breakwater.deadline.Deadline;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.Durations;
import io.breakwater.internal.Lift;
import io.breakwater.internal.Saturating;
import io.breakwater.limit.CallWeight;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.LimitExceededException.Reason;
import io.breakwater.limit.ProviderRateLimits.Reading;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Operators;
import reactor.util.context.ContextView;

/**
 * The in-memory rate limit: two token buckets ({@link RateBuckets}) and a fair queue ({@link FairQueue}). A call takes
 * its permits at once while nobody waits, without a lock: a compare-and-set on each bucket's level
 * ({@link RateBuckets#tryTake}); so are the correction of its tokens when it ends and the permits it gives back.
 * Otherwise it joins the queue, under this object's monitor, whose head runs when the buckets hold its permits: one
 * timer, for the head, set for the instant they will. The provider's headers and 429s change the buckets under the
 * monitor too. Every section under the monitor takes the levels from the lock-free path ({@code refill}) and hands
 * them back ({@code publish}) before it leaves.
 */
public final class LocalRateLimit extends RateEngine {

  private final RateSettings settings;
  private final long maxWaitNanos;
  private final RateBuckets buckets;
  private final FairQueue<Waiter> queue;
  private volatile int queued;
  @Nullable
  private Disposable timer;
  private FairQueue.@Nullable Node<Waiter> timedFor;

  private final LimitMetrics metrics;

  public LocalRateLimit(RateSettings settings) {
    this.settings = settings;
    this.queue = new FairQueue<>(settings.maxQueuePerTask());
    this.maxWaitNanos = settings.maxWaitNanos();
    this.buckets = new RateBuckets(settings, now());
    buckets.publish();
    this.metrics = LimitMetrics.of(this, settings.meterRegistry());
  }

  @Override
  public RateSettings settings() {
    return settings;
  }

  @Override
  public String name() {
    return settings.name();
  }

  @Override
  public synchronized long availableRequests() {
    long now = now();
    buckets.refill(now);
    long available = floor(buckets.available(RateBuckets.REQUESTS, now));
    buckets.publish();
    return available;
  }

  @Override
  public synchronized long availableTokens() {
    long now = now();
    buckets.refill(now);
    long available = floor(buckets.available(RateBuckets.TOKENS, now));
    buckets.publish();
    return available;
  }

  private static long floor(double level) {
    return level >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.floor(level);
  }

  @Override
  public int queued() {
    return queued;
  }

  @Override
  public <T> void subscribe(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono,
      CallWeight<? super T> weight) {
    if (queued == 0) {
      ThrottleSubscriber<T> call = new ThrottleSubscriber<>(actual, this, weight, mono);
      int taken = buckets.tryTake(call.estimate(), now(), call);
      if (taken == BucketLevel.DONE || (taken != BucketLevel.SHORT && tryTakeLocked(call, taken))) {
        Lift.subscribeUpstream(source, call);
        return;
      }
    }
    waitForPermits(source, actual, mono, weight);
  }

  /** The lock-free path found the levels held by the monitor: takes the permits under it. */
  private synchronized boolean tryTakeLocked(ThrottleSubscriber<?> call, int lockFree) {
    long now = now();
    buckets.refill(now);
    if (lockFree == RateBuckets.GIVE_BACK_REQUEST) {
      buckets.giveBackRequest();
    }
    boolean taken = queue.isEmpty() && buckets.canTake(call.estimate(), now);
    if (taken) {
      buckets.take(call.estimate());
      call.admitted(buckets.admitted(RateBuckets.REQUESTS), buckets.admitted(RateBuckets.TOKENS), now);
    }
    buckets.publish();
    return taken;
  }

  private <T> void waitForPermits(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono,
      CallWeight<? super T> weight) {
    ContextView ctx = actual.currentContext();
    Deadline deadline = Deadline.from(ctx).orElse(null);
    long wait = deadline == null ? maxWaitNanos : Math.min(maxWaitNanos, deadline.remainingNanos());
    Object flow = TaskShares.taskOf(ctx);
    Waiter waiter = new Waiter(weight.estimate(), flow, wait,
        deadline != null && deadline.remainingNanos() < maxWaitNanos);
    waiter.run(actual, () -> enqueue(waiter), () -> subscriber -> source.subscribe(
        new ThrottleSubscriber<T>(Operators.toCoreSubscriber(subscriber), this, weight, mono)
            .admitted(waiter.admittedRequests, waiter.admittedTokens, waiter.admittedAt)));
  }

  private void enqueue(Waiter waiter) {
    LimitExceededException refusal = null;
    boolean now;
    synchronized (this) {
      long t = now();
      buckets.refill(t);
      now = queue.isEmpty() && buckets.canTake(waiter.tokens, t);
      if (now) {
        buckets.take(waiter.tokens);
        waiter.admitted(t);
      } else {
        refusal = admit(waiter, t);
      }
      buckets.publish();
    }
    if (now) {
      waiter.grantNow();
    } else if (refusal != null) {
      waiter.refuse(refusal);
    } else {
      waiter.expireAfter(scheduler(), waiter.waitNanos);
    }
  }

  /** Queues {@code waiter} if its turn can come in time; the refusal otherwise. Guarded by {@code this}. */
  @Nullable
  private LimitExceededException admit(Waiter waiter, long now) {
    if (!buckets.fits(waiter.tokens)) {
      return tooHeavy(waiter.tokens);
    }
    if (waiter.waitNanos <= 0 || settings.maxQueue() == 0) {
      long eta = buckets.nanosUntil(1, waiter.tokens, now);
      return new LimitExceededException(name(), Reason.WOULD_WAIT_TOO_LONG, duration(eta), "1 request and "
          + waiter.tokens + " tokens are not there (" + buckets + ")" + when(eta) + ", and "
          + (waiter.waitNanos > 0 || maxWaitNanos == 0 ? "it does not queue calls"
          : "the deadline in force has passed"));
    }
    if (queue.size() >= settings.maxQueue()) {
      return new LimitExceededException(name(), Reason.QUEUE_FULL, null, settings.maxQueue()
          + " calls already wait for " + buckets);
    }
    if (queue.holdsItsShare(waiter.flow)) {
      return TaskShares.full(name(), settings.maxQueuePerTask(), settings.maxQueue());
    }
    double start = queue.startTag(waiter.flow);
    double[] demand = queue.demandUpTo(start, waiter.tokens);
    long eta = buckets.nanosUntil(demand[0], demand[1], now);
    if (eta > waiter.waitNanos) {
      return new LimitExceededException(name(), Reason.WOULD_WAIT_TOO_LONG, duration(eta), "1 request and "
          + waiter.tokens + " tokens could be taken only" + when(eta) + ", after " + queue.size()
          + " queued calls, past " + (waiter.deadlineBound ? "the deadline in force" : "its maxWait") + " ("
          + Durations.format(Duration.ofNanos(waiter.waitNanos)) + ")");
    }
    queue.add(waiter.node, waiter.flow, start, buckets.cost(waiter.tokens));
    queued = queue.size();
    if (queue.peek() == waiter.node) {
      schedule(now);
    }
    return null;
  }

  private LimitExceededException tooHeavy(long tokens) {
    return new LimitExceededException(name(), Reason.TOO_HEAVY, null, "a call of " + tokens
        + " tokens can never run: the limit holds at most " + buckets + "; split the call or raise the limit");
  }

  private static String when(long eta) {
    return eta == Long.MAX_VALUE ? " never at the current rates" : " in " + Durations.format(Duration.ofNanos(eta));
  }

  /** Runs the calls whose permits are there, in fair order, and sets the timer for the next. */
  private void dispatch() {
    Waiter granted = null;
    Waiter last = null;
    Waiter refused = null;
    synchronized (this) {
      long now = now();
      buckets.refill(now);
      for (FairQueue.Node<Waiter> head = queue.peek(); head != null; head = queue.peek()) {
        Waiter w = head.call;
        if (!buckets.fits(w.tokens)) {
          queue.poll();
          w.nextGranted = refused;
          refused = w;
          continue;
        }
        if (!buckets.canTake(w.tokens, now)) {
          break;
        }
        queue.poll();
        if (w.grant()) {
          buckets.take(w.tokens);
          w.admitted(now);
          if (last == null) {
            granted = w;
          } else {
            last.nextGranted = w;
          }
          last = w;
        }
      }
      queued = queue.size();
      timedFor = null;   // this run may be the timer's own, not disposed yet: the head left still needs one
      schedule(now, 1);   // a head that cannot run now is looked at again no sooner than a nanosecond later
      buckets.publish();
    }
    for (Waiter w = refused; w != null; w = w.nextGranted) {
      w.fail(tooHeavy(w.tokens));
    }
    for (Waiter w = granted; w != null; ) {
      Waiter next = w.nextGranted;
      w.nextGranted = null;
      w.deliver();
      w = next;
    }
  }

  /** Sets the one timer for the head of the queue, if the head changed. Guarded by {@code this}. */
  private void schedule(long now) {
    schedule(now, 0);
  }

  /** Sets the one timer, at least {@code minNanos} ahead. Guarded by {@code this}. */
  private void schedule(long now, long minNanos) {
    FairQueue.Node<Waiter> head = queue.peek();
    if (head == timedFor && timer != null && !timer.isDisposed()) {
      return;
    }
    if (timer != null) {
      timer.dispose();
      timer = null;
    }
    timedFor = head;
    if (head == null) {
      return;
    }
    long eta = buckets.nanosUntil(1, head.tokens, now);
    if (eta != Long.MAX_VALUE) {
      timer = scheduler().schedule(this::dispatch, Saturating.delayNanos(Math.max(minNanos, eta)),
          TimeUnit.NANOSECONDS);
    }
  }

  private synchronized void leave(Waiter waiter) {
    boolean head = queue.peek() == waiter.node;
    queue.remove(waiter.node);
    queued = queue.size();
    if (head) {
      timedFor = null;
      long now = now();
      buckets.refill(now);
      schedule(now);
      buckets.publish();
    }
  }

  @Override
  void completed(ThrottleSubscriber<?> call, long actualTokens) {
    if (actualTokens < 0 || actualTokens == call.estimate()) {
      return;
    }
    long delta = actualTokens - call.estimate();
    if (!buckets.correctNow(delta, now())) {
      synchronized (this) {
        buckets.refill(now());
        buckets.correct(delta);
        buckets.publish();
      }
    }
    wakeQueue();
  }

  /** Gives back the permits of a call that never reached the provider. */
  private void giveBack(long tokens) {
    int given = buckets.giveBackNow(tokens, now());
    if (given < 2) {
      synchronized (this) {
        buckets.refill(now());
        if (given == 0) {
          buckets.giveBack(tokens);
        } else {
          buckets.correct(-tokens);
        }
        buckets.publish();
      }
    }
    wakeQueue();
  }

  @Override
  void failed(ThrottleSubscriber<?> call, Throwable error, long actualTokens) {
    HttpStatusException http = httpOf(error);
    if (http == null) {
      if (neverSent(error)) {
        giveBack(call.estimate());
      } else {
        completed(call, actualTokens);
      }
      return;
    }
    Reading reading = settings.headers().read(http.headers(), epochMillis());
    synchronized (this) {
      long now = now();
      buckets.refill(now);
      if (http.status() == 429) {
        buckets.rejected(reading, call.estimate(), call.admittedRequests, call.admittedTokens, call.admittedAt, now);
      } else {
        if (actualTokens >= 0) {   // a call that ended: charged what it used, as the shared limit's store does
          buckets.correct(actualTokens - call.estimate());
        }
        buckets.observe(reading, call.admittedRequests, call.admittedTokens, call.admittedAt, now);
      }
      buckets.publish();
    }
    wakeQueue();
  }

  @Override
  void headers(ThrottleSubscriber<?> call, Map<String, ? extends List<String>> headers) {
    Reading reading = settings.headers().read(headers, epochMillis());
    if (reading.isEmpty()) {
      return;
    }
    synchronized (this) {
      long now = now();
      buckets.refill(now);
      buckets.observe(reading, call.admittedRequests, call.admittedTokens, call.admittedAt, now);
      buckets.publish();
    }
    wakeQueue();
  }

  /** After the buckets changed: runs what can run and moves the timer. */
  private void wakeQueue() {
    if (queued != 0) {
      dispatch();
    }
  }

  @Override
  public synchronized String toString() {
    buckets.refill(now());
    buckets.publish();
    return "RateLimit{" + name() + ", " + buckets + ", queued " + queue.size() + ", maxWait "
        + Durations.format(settings.maxWait()) + ", maxQueue " + settings.maxQueue() + ", "
        + settings.headers() + "}";
  }

  /** A call waiting for its permits. */
  private final class Waiter extends Turn {

    @Override
    LimitMetrics metrics() {
      return metrics;
    }
    final long tokens;
    final FairQueue.Node<Waiter> node;
    final Object flow;
    final long waitNanos;
    final boolean deadlineBound;
    @Nullable Waiter nextGranted;
    double admittedRequests;
    double admittedTokens;
    long admittedAt;

    Waiter(long tokens, Object flow, long waitNanos, boolean deadlineBound) {
      this.tokens = tokens;
      this.node = new FairQueue.Node<>(this, tokens);
      this.flow = flow;
      this.waitNanos = waitNanos;
      this.deadlineBound = deadlineBound;
    }

    /** Guarded by the limit. */
    void admitted(long now) {
      admittedRequests = buckets.admitted(RateBuckets.REQUESTS);
      admittedTokens = buckets.admitted(RateBuckets.TOKENS);
      admittedAt = now;
    }

    @Override
    void leaveQueue() {
      leave(this);
    }

    @Override
    void returnGrant() {
      giveBack(tokens);
    }

    @Override
    Throwable expired() {
      long eta;
      synchronized (LocalRateLimit.this) {
        long now = now();
        buckets.refill(now);
        eta = buckets.nanosUntil(1, tokens, now);
        buckets.publish();
      }
      return new LimitExceededException(name(), Reason.WAITED_TOO_LONG, duration(eta), "1 request and " + tokens
          + " tokens did not come within " + Durations.format(Duration.ofNanos(waitNanos)) + " ("
          + (deadlineBound ? "the deadline in force" : "its maxWait") + "; " + queued + " calls queued)");
    }
  }
}
