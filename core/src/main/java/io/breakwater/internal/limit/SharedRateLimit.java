package io.breakwater.internal.limit;

import io.breakwater.deadline.Deadline;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.Durations;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.StoreCallBound;
import io.breakwater.internal.limit.BucketStore.Outcome;
import io.breakwater.internal.limit.BucketStore.Settlement;
import io.breakwater.internal.limit.BucketStore.Taken;
import io.breakwater.limit.CallWeight;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.LimitExceededException.Reason;
import io.breakwater.limit.ProviderRateLimits.Reading;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.context.ContextView;

/**
 * A rate limit whose buckets live in a {@link BucketStore} shared by every instance. The calls of this instance wait in
 * a local fair queue ({@link FairQueue}, one flow per task); its head asks the store to take its permits (one atomic
 * step) and, when they are not there, asks again when the store says they will be. What the provider says and what a
 * call really used are settled in the store, one step per call that has anything to settle.
 *
 * <p>A call is refused at once when the store's last answer says its turn could not come in time. When the store does
 * not answer within {@code operationTimeout}, a limit that fails open runs the waiting calls through a local rate limit
 * with the same settings (it still learns from the provider's headers), and asks the store again after a second; one
 * that fails closed refuses them with {@code STORE_UNAVAILABLE}.
 */
public final class SharedRateLimit extends RateEngine {

  private static final Logger LOG = Loggers.getLogger(SharedRateLimit.class);

  private final RateSettings settings;
  private final SharedSettings shared;
  private final BucketStore store;
  private final LocalRateLimit fallback;
  private final long maxWaitNanos;

  /** Guarded by {@code this}. */
  private final FairQueue<Waiter> queue;
  private volatile int queued;
  private boolean asking;
  @Nullable
  private Disposable poll;
  /** The store's last answer: what was left then, and the refill rates; guarded by {@code this}. */
  @Nullable
  private Taken last;
  private long lastAt;
  private final StoreOutage outage = new StoreOutage();

  private final LimitMetrics metrics;

  public SharedRateLimit(RateSettings settings, SharedSettings shared, BucketStore store) {
    this.settings = settings;
    this.queue = new FairQueue<>(settings.maxQueuePerTask());
    this.shared = shared;
    this.store = store;
    this.fallback = new LocalRateLimit(settings);
    this.maxWaitNanos = settings.maxWaitNanos();
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
  public int queued() {
    return queued + fallback.queued();
  }

  @Override
  public <T> void subscribe(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono,
      CallWeight<? super T> weight) {
    ContextView ctx = actual.currentContext();
    Deadline deadline = Deadline.from(ctx).orElse(null);
    long wait = deadline == null ? maxWaitNanos : Math.min(maxWaitNanos, deadline.remainingNanos());
    Object flow = TaskShares.taskOf(ctx);
    Waiter waiter = new Waiter(weight.estimate(), flow, wait);
    waiter.run(actual, () -> enqueue(waiter), () -> waiter.permitted(source, mono, weight));
  }

  private void enqueue(Waiter waiter) {
    LimitExceededException refusal;
    synchronized (this) {
      refusal = admit(waiter);
    }
    if (refusal != null) {
      waiter.refuse(refusal);
      return;
    }
    if (waiter.waits()) {
      waiter.expireAfter(scheduler(), waiter.waitNanos);
    }
    pump();
  }

  /** Queues {@code waiter} unless the store's last answer says it could not run in time. Guarded by {@code this}. */
  @Nullable
  private LimitExceededException admit(Waiter waiter) {
    if (settings.tokens() >= 0 && waiter.tokens > settings.tokens()) {
      return tooHeavy(waiter.tokens);
    }
    if (queue.size() >= Math.max(1, settings.maxQueue())) {
      return new LimitExceededException(name(), Reason.QUEUE_FULL, null, queue.size() + " calls already wait for "
          + store);
    }
    if (queue.holdsItsShare(waiter.flow)) {
      return TaskShares.full(name(), settings.maxQueuePerTask(), settings.maxQueue());
    }
    double start = queue.startTag(waiter.flow);
    long eta = 0;
    if (!queue.isEmpty() || last != null && !last.taken()) {
      double[] demand = queue.demandUpTo(start, waiter.tokens);
      eta = estimate(demand[0], demand[1]);
    }
    if (!waiter.waits() && (!queue.isEmpty() || eta > 0)) {
      return new LimitExceededException(name(), Reason.WOULD_WAIT_TOO_LONG, duration(eta), "1 request and "
          + waiter.tokens + " tokens are not free in " + store + " and " + (waiter.waitNanos <= 0 && maxWaitNanos > 0
          && settings.maxQueue() > 0 ? "the deadline in force has passed" : "it does not queue calls"));
    }
    if (eta > waiter.waitNanos) {
      return new LimitExceededException(name(), Reason.WOULD_WAIT_TOO_LONG, duration(eta), "1 request and "
          + waiter.tokens + " tokens could be taken from " + store + " only in about "
          + Durations.format(Duration.ofNanos(eta)) + ", after " + queue.size() + " queued calls here, past "
          + Durations.format(Duration.ofNanos(waiter.waitNanos)));
    }
    queue.add(waiter.node, waiter.flow, start, cost(waiter.tokens));
    queued = queue.size();
    return null;
  }

  /** How long until {@code requests} and {@code tokens} refill, by the store's last answer. Guarded by {@code this}. */
  private long estimate(double requests, double tokens) {
    if (last == null) {
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

  /** The fair queue's cost of a call: nanoseconds of the scarcer bucket, by the store's last rates. */
  private double cost(long tokens) {
    double requestRate = last != null ? last.requestsPerNano() : rate(settings.requests(), settings.requestInterval());
    double tokenRate = last != null ? last.tokensPerNano() : rate(settings.tokens(), settings.tokenInterval());
    return Math.max(requestRate > 0 && requestRate < Double.POSITIVE_INFINITY ? 1 / requestRate : 0,
        tokenRate > 0 && tokenRate < Double.POSITIVE_INFINITY ? tokens / tokenRate : 0);
  }

  private static double rate(long count, @Nullable Duration interval) {
    return count < 0 || interval == null ? Double.POSITIVE_INFINITY : count / (double) Saturating.nanos(interval);
  }

  /** Asks the store for the permits of the call at the head of the queue, unless a request is in flight. */
  private void pump() {
    Waiter head;
    synchronized (this) {
      if (asking) {
        return;
      }
      FairQueue.Node<Waiter> node = queue.peek();
      while (node != null && !node.call.isWaiting()) {
        queue.remove(node);
        node = queue.peek();
      }
      queued = queue.size();
      if (node == null) {
        return;
      }
      head = node.call;
      asking = true;
      if (poll != null) {
        poll.dispose();
        poll = null;
      }
    }
    if (outage.leaveAlone(now())) {
      storeUnreachable(null);
      return;
    }
    StoreCallBound.within(Mono.defer(() -> store.take(head.tokens)), shared.operationTimeout(), scheduler())
        .subscribe(taken -> answered(head, taken), this::storeUnreachable);
  }

  private void answered(Waiter head, Taken taken) {
    boolean granted = false;
    synchronized (this) {
      asking = false;
      last = taken;
      lastAt = now();
      if (taken.taken()) {
        head.admitted = taken;   // before the grant: a caller leaving right after it settles these marks
        granted = head.grant();
        queue.take(head.node);
        queued = queue.size();
      } else if (!taken.tooHeavy() && taken.waitNanos() != Long.MAX_VALUE && !queue.isEmpty() && poll == null) {
        poll = scheduler().schedule(() -> {
          synchronized (this) {
            poll = null;
          }
          pump();
        }, Saturating.delayNanos(Math.max(taken.waitNanos(), 1_000_000L)), TimeUnit.NANOSECONDS);
      }
    }
    if (taken.taken()) {
      if (granted) {
        head.deliver();
      } else {
        settle(new Settlement(Outcome.NEVER_SENT, head.tokens, -1, null, taken.admittedRequests(),
            taken.admittedTokens(), taken.at()));
      }
      pump();
    } else if (taken.tooHeavy()) {
      leave(head);
      head.fail(tooHeavy(head.tokens));
      pump();
    } else if (!head.waits()) {
      leave(head);
      head.fail(new LimitExceededException(name(), Reason.WOULD_WAIT_TOO_LONG, duration(taken.waitNanos()),
          "1 request and " + head.tokens + " tokens are not free in " + store + " and it does not queue calls"));
      pump();
    }
  }

  /** The store did not answer: every waiting call goes to the local fallback, or is refused. */
  private void storeUnreachable(@Nullable Throwable error) {
    List<Waiter> waiting = new ArrayList<>();
    synchronized (this) {
      asking = false;
      for (FairQueue.Node<Waiter> n = queue.peek(); n != null; n = queue.peek()) {
        queue.take(n);
        waiting.add(n.call);
      }
      queued = 0;
    }
    // a waiter let through keeps a null admitted: its call goes through the local fallback
    outage.letThroughOrRefuse(error, now(), shared.failOpen(), LOG, "Rate limit '" + name() + "'", name(), store,
        "calls go through a local limit", waiting);
  }

  private synchronized void leave(Waiter waiter) {
    queue.remove(waiter.node);
    queued = queue.size();
  }

  private void settle(Settlement settlement) {
    // deferred: a store that throws instead of answering with an error (a bug of its own) must not take the
    // signal of the call being settled with it
    Mono.defer(() -> store.settle(settlement)).timeout(shared.operationTimeout(), scheduler()).subscribe(null,
        e -> LOG.debug("Rate limit '{}': a call's settlement did not reach {} ({})", name(), store, e.toString()),
        this::pump);
  }

  private void settle(ThrottleSubscriber<?> call, Outcome outcome, long actual, @Nullable Reading reading) {
    settle(new Settlement(outcome, call.estimate(), actual, reading, call.admittedRequests, call.admittedTokens,
        call.admittedAt));
  }

  @Override
  void completed(ThrottleSubscriber<?> call, long actualTokens) {
    if (actualTokens >= 0 && actualTokens != call.estimate()) {
      settle(call, Outcome.ENDED, actualTokens, null);
    }
  }

  @Override
  void failed(ThrottleSubscriber<?> call, Throwable error, long actualTokens) {
    HttpStatusException http = httpOf(error);
    if (http != null) {
      Reading reading = settings.headers().read(http.headers(), epochMillis());
      settle(call, http.status() == 429 ? Outcome.REJECTED : Outcome.ENDED, actualTokens, reading);
    } else if (neverSent(error)) {
      settle(call, Outcome.NEVER_SENT, -1, null);
    } else {
      completed(call, actualTokens);
    }
  }

  @Override
  void headers(ThrottleSubscriber<?> call, Map<String, ? extends List<String>> headers) {
    Reading reading = settings.headers().read(headers, epochMillis());
    if (!reading.isEmpty()) {
      settle(call, Outcome.ENDED, -1, reading);
    }
  }

  private LimitExceededException tooHeavy(long tokens) {
    return new LimitExceededException(name(), Reason.TOO_HEAVY, null, "a call of " + tokens
        + " tokens can never run: " + store + " holds fewer when full; split the call or raise the limit");
  }

  @Override
  public String toString() {
    return "RateLimit{" + name() + ", shared in " + store + ", queued here " + queued + ", maxWait "
        + Durations.format(settings.maxWait()) + ", " + (shared.failOpen() ? "fails open" : "fails closed") + ", "
        + settings.headers() + "}";
  }

  /** A call waiting for its permits in the store. */
  private final class Waiter extends Turn {

    @Override
    LimitMetrics metrics() {
      return metrics;
    }
    final long tokens;
    final FairQueue.Node<Waiter> node;
    final Object flow;
    final long waitNanos;
    /** The store's answer that admitted it; {@code null} for a call sent to the local fallback. */
    @Nullable volatile Taken admitted;

    Waiter(long tokens, Object flow, long waitNanos) {
      this.tokens = tokens;
      this.node = new FairQueue.Node<>(this, tokens);
      this.flow = flow;
      this.waitNanos = waitNanos;
    }

    boolean waits() {
      return waitNanos > 0 && settings.maxQueue() > 0;
    }

    <T> Publisher<T> permitted(Publisher<? extends T> source, boolean mono, CallWeight<? super T> weight) {
      Taken marks = admitted;
      if (marks == null) {
        return subscriber -> fallback.subscribe(source, Operators.toCoreSubscriber(subscriber), mono, weight);
      }
      return subscriber -> source.subscribe(new ThrottleSubscriber<T>(Operators.toCoreSubscriber(subscriber),
          SharedRateLimit.this, weight, mono).admitted(marks.admittedRequests(), marks.admittedTokens(), marks.at()));
    }

    @Override
    void leaveQueue() {
      leave(this);
      pump();
    }

    @Override
    void returnGrant() {
      Taken marks = admitted;
      if (marks != null) {
        settle(new Settlement(Outcome.NEVER_SENT, tokens, -1, null, marks.admittedRequests(), marks.admittedTokens(),
            marks.at()));
      }
    }

    @Override
    Throwable expired() {
      long eta;
      synchronized (SharedRateLimit.this) {
        eta = estimate(1, tokens);
      }
      return new LimitExceededException(name(), Reason.WAITED_TOO_LONG, duration(eta), "1 request and " + tokens
          + " tokens did not come free in " + store + " within " + Durations.format(Duration.ofNanos(waitNanos)));
    }
  }
}
