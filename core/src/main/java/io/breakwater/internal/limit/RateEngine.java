package io.breakwater.internal.limit;

import io.breakwater.BreakwaterException;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.internal.Durations;
import io.breakwater.internal.Lift;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.failure.CompositeFailures;
import io.breakwater.internal.limit.BucketStore.Outcome;
import io.breakwater.internal.limit.BucketStore.Settlement;
import io.breakwater.internal.limit.BucketStore.Taken;
import io.breakwater.limit.CallWeight;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.LimitExceededException.Reason;
import io.breakwater.limit.ProviderRateLimits.Reading;
import io.breakwater.limit.RateLimit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.ContextView;

/**
 * What every {@link RateLimit} is underneath, in memory or shared: one admission and queue engine
 * ({@link LimitQueue}) over a {@link RateStore}, the only thing that differs ({@link #local}, {@link #shared});
 * {@code throttledBy} accepts nothing else. While nobody waits, a call takes its permits without a lock (in memory: a
 * compare-and-set on each bucket's level; a shared store never answers at once). Otherwise it is refused at once when
 * it could never run, may not wait, finds the queue or its task's share full, or when the store says its turn could
 * not come within its wait; the others join a fair queue ({@link FairQueue}, one flow per task). A call's end
 * ({@link ThrottleSubscriber}) settles in the store what there is to settle: its actual usage, the provider's
 * headers, a 429, a refusal before the wire; then the head may run.
 */
public final class RateEngine extends LimitQueue<RateEngine.Waiter, Taken> implements RateLimit {

  private final RateSettings settings;
  private final RateStore store;
  /** Where the calls go while a shared store does not answer and the limit fails open; {@code null} in memory. */
  @Nullable
  private final RateEngine fallback;
  private final long maxWaitNanos;

  /** Guarded by {@code this}. */
  private final FairQueue<Waiter> queue;
  private volatile int queued;

  private final LimitMetrics metrics;

  private RateEngine(RateSettings settings, RateStore store, @Nullable RateEngine fallback) {
    this.settings = settings;
    this.store = store;
    this.fallback = fallback;
    this.queue = new FairQueue<>(settings.maxQueuePerTask());
    this.maxWaitNanos = settings.maxWaitNanos();
    this.metrics = LimitMetrics.of(this, settings.meterRegistry());
  }

  /** The in-memory rate limit. */
  public static RateEngine local(RateSettings settings) {
    return new RateEngine(settings, new LocalBuckets(settings), null);
  }

  /**
   * A rate limit whose buckets live in {@code store}, shared by every instance; when the store does not answer, a
   * limit that fails open runs the waiting calls through an in-memory limit with the same settings.
   */
  public static RateEngine shared(RateSettings settings, SharedSettings shared, BucketStore store) {
    RateEngine fallback = local(settings);
    return new RateEngine(settings, new SharedBuckets(settings, shared, store), fallback);
  }

  /** The limit's settings: a shared limit built from this one as a template takes them. */
  public RateSettings settings() {
    return settings;
  }

  @Override
  public String name() {
    return settings.name();
  }

  @Override
  Scheduler scheduler() {
    return settings.scheduler().get();
  }

  /** The limit's clock in epoch milliseconds, to turn reset instants into durations. */
  private long epochMillis() {
    return scheduler().now(TimeUnit.MILLISECONDS);
  }

  @Override
  public long availableRequests() {
    return store.availableRequests();
  }

  @Override
  public long availableTokens() {
    return store.availableTokens();
  }

  @Override
  public int queued() {
    return fallback == null ? queued : queued + fallback.queued();
  }

  /**
   * Subscribes {@code actual} to {@code source} once the call's permits are taken, or fails it with a
   * {@link LimitExceededException} without subscribing {@code source}.
   */
  public <T> void subscribe(Publisher<? extends T> source, CoreSubscriber<? super T> actual, boolean mono,
      CallWeight<? super T> weight) {
    if (queued == 0) {
      ThrottleSubscriber<T> call = new ThrottleSubscriber<>(actual, this, weight, mono);
      int taken = store.tryTake(call);
      if (taken == BucketLevel.DONE || (taken != BucketLevel.SHORT && takeLocked(call, taken))) {
        Lift.subscribeUpstream(source, call);
        return;
      }
    }
    ContextView ctx = actual.currentContext();
    Waiter waiter = new Waiter(weight.estimate(), TaskShares.taskOf(ctx), waitNanos(ctx, maxWaitNanos));
    waiter.run(actual, () -> enqueue(waiter), () -> waiter.permitted(source, mono, weight));
  }

  /** The lock-free take found the levels held: takes the permits under the lock, unless calls are queued. */
  private synchronized boolean takeLocked(ThrottleSubscriber<?> call, int lockFree) {
    return store.takeLocked(call, lockFree, queue.isEmpty());
  }

  /** Queues {@code waiter} if its turn can come in time; the refusal otherwise. Guarded by {@code this}. */
  @Override
  @Nullable
  LimitExceededException admit(Waiter waiter) {
    if (!store.fits(waiter.tokens)) {
      return tooHeavy(waiter.tokens);
    }
    double start = queue.startTag(waiter.flow);
    double[] demand = queue.demandUpTo(start, waiter.tokens);
    long eta = store.nanosUntil(demand[0], demand[1], queue.isEmpty());
    if (!waiter.waits() && (!queue.isEmpty() || eta > 0)) {
      return new LimitExceededException(name(), Reason.WOULD_WAIT_TOO_LONG, duration(eta), "1 request and "
          + waiter.tokens + " tokens are not there (" + store.levels() + ")" + when(eta) + ", and "
          + (waiter.waitNanos <= 0 && maxWaitNanos > 0 && settings.maxQueue() > 0
          ? "the deadline in force has passed" : "it does not queue calls"));
    }
    if (queue.size() >= Math.max(1, settings.maxQueue())) {
      return new LimitExceededException(name(), Reason.QUEUE_FULL, null, queue.size() + " calls already wait for "
          + store.levels());
    }
    if (queue.holdsItsShare(waiter.flow)) {
      return TaskShares.full(name(), settings.maxQueuePerTask(), settings.maxQueue());
    }
    if (eta > waiter.waitNanos) {
      return new LimitExceededException(name(), Reason.WOULD_WAIT_TOO_LONG, duration(eta), "1 request and "
          + waiter.tokens + " tokens could be taken" + store.where("from") + " only" + when(eta) + ", after "
          + queue.size() + " queued calls, past " + (waiter.deadlineBound() ? "the deadline in force" : "its maxWait")
          + " (" + Durations.format(Duration.ofNanos(waiter.waitNanos)) + ")");
    }
    queue.add(waiter.node, waiter.flow, start, store.cost(waiter.tokens));
    queued = queue.size();
    return null;
  }

  private LimitExceededException tooHeavy(long tokens) {
    return new LimitExceededException(name(), Reason.TOO_HEAVY, null, "a call of " + tokens
        + " tokens can never run: the limit holds fewer when full (" + store.levels() + "); split the call or raise "
        + "the limit");
  }

  private static String when(long eta) {
    return eta == Long.MAX_VALUE ? " never at the current rates" : " in " + Durations.format(Duration.ofNanos(eta));
  }

  /** {@code nanos} as a duration; {@code null} for {@link Long#MAX_VALUE}, which means never. */
  @Nullable
  private static Duration duration(long nanos) {
    return nanos == Long.MAX_VALUE ? null : Duration.ofNanos(nanos);
  }

  @Override
  @Nullable
  Waiter first() {
    FairQueue.Node<Waiter> node = queue.peek();
    while (node != null && !node.call.isWaiting()) {
      queue.remove(node);
      node = queue.peek();
    }
    queued = queue.size();
    return node == null ? null : node.call;
  }

  @Override
  List<Waiter> drain() {
    List<Waiter> waiting = new ArrayList<>();
    for (FairQueue.Node<Waiter> n = queue.peek(); n != null; n = queue.peek()) {
      queue.take(n);
      waiting.add(n.call);
    }
    queued = 0;
    return waiting;
  }

  @Override
  @Nullable
  Taken ask(Waiter head, Consumer<Taken> later, StoreOutage.Unreachable unreachable) {
    return store.take(head.tokens, later, unreachable);
  }

  @Override
  boolean answered(Waiter head, Taken taken) {
    boolean granted = false;
    boolean again;
    synchronized (this) {
      again = answerCame();
      if (taken.taken()) {
        head.admitted = taken;   // before the grant: a caller leaving right after it settles these marks
        granted = head.grant();
        queue.take(head.node);
        queued = queue.size();
      } else if (!taken.tooHeavy() && taken.waitNanos() != Long.MAX_VALUE && !queue.isEmpty()) {
        askAgainIn(Saturating.delayNanos(Math.max(taken.waitNanos(), store.minPollNanos())));
      }
    }
    if (taken.taken()) {
      if (granted) {
        head.deliver();
      } else {
        settle(new Settlement(Outcome.NEVER_SENT, head.tokens, -1, null, taken.admittedRequests(),
            taken.admittedTokens(), taken.at()));
      }
      return true;
    }
    if (taken.tooHeavy()) {
      leave(head);
      head.fail(tooHeavy(head.tokens));
      return true;
    }
    if (!head.waits()) {
      leave(head);
      head.fail(new LimitExceededException(name(), Reason.WOULD_WAIT_TOO_LONG, duration(taken.waitNanos()),
          "1 request and " + head.tokens + " tokens are not free" + store.where("in") + " and it does not queue "
          + "calls"));
      return true;
    }
    return again;
  }

  @Override
  void unreachable(@Nullable Throwable error, List<Waiter> waiting) {
    store.unreachable(error, waiting);
  }

  private synchronized void leave(Waiter waiter) {
    queue.remove(waiter.node);
    queued = queue.size();
  }

  /** Settles a call in the store; then the head may run. */
  private void settle(Settlement settlement) {
    store.settle(settlement, this::wakeQueue);
  }

  private void settle(ThrottleSubscriber<?> call, Outcome outcome, long actual, @Nullable Reading reading) {
    settle(new Settlement(outcome, call.estimate(), actual, reading, call.admittedRequests, call.admittedTokens,
        call.admittedAt));
  }

  private void wakeQueue() {
    if (queued != 0) {
      pump();
    }
  }

  /** A call ended: its actual usage ({@code -1} when unknown) replaces its estimate. */
  void completed(ThrottleSubscriber<?> call, long actualTokens) {
    if (actualTokens >= 0 && actualTokens != call.estimate()) {
      settle(call, Outcome.ENDED, actualTokens, null);
    }
  }

  /** A call failed: learn from an HTTP answer in the error; give back what a call refused before the wire took. */
  void failed(ThrottleSubscriber<?> call, Throwable error, long actualTokens) {
    HttpStatusException http = CompositeFailures.first(error, HttpStatusException.class);
    if (http != null) {
      Reading reading = settings.headers().read(http.headers(), epochMillis());
      settle(call, http.status() == 429 ? Outcome.REJECTED : Outcome.ENDED, actualTokens, reading);
    } else if (neverSent(error)) {
      settle(call, Outcome.NEVER_SENT, -1, null);
    } else {
      completed(call, actualTokens);
    }
  }

  /** A call's element carried the provider's headers. */
  void headers(ThrottleSubscriber<?> call, Map<String, ? extends List<String>> headers) {
    Reading reading = settings.headers().read(headers, epochMillis());
    if (!reading.isEmpty()) {
      settle(call, Outcome.ENDED, -1, reading);
    }
  }

  /**
   * Whether {@code error} was raised by Breakwater before the call could reach the dependency: an open breaker or
   * another limit refused it, so its permits go back.
   */
  static boolean neverSent(Throwable error) {
    return error instanceof BreakwaterException b
        && (b.failureKind() == FailureKind.CIRCUIT_OPEN || b.failureKind() == FailureKind.LIMIT_EXCEEDED);
  }

  @Override
  public String toString() {
    return "RateLimit{" + name() + ", " + store.describe(queued, settings) + ", " + settings.headers() + "}";
  }

  /** A call waiting for its permits. */
  final class Waiter extends Turn {

    final long tokens;
    final FairQueue.Node<Waiter> node;
    final Object flow;
    /** The store's answer that admitted it; {@code null} for a call sent to the local fallback. */
    @Nullable volatile Taken admitted;

    Waiter(long tokens, Object flow, long waitNanos) {
      super(waitNanos, settings.maxQueue() > 0);
      this.tokens = tokens;
      this.node = new FairQueue.Node<>(this, tokens);
      this.flow = flow;
    }

    /** Whether the deadline in force, not the limit's maxWait, bounds its wait. */
    boolean deadlineBound() {
      return waitNanos < maxWaitNanos;
    }

    @Override
    LimitMetrics metrics() {
      return metrics;
    }

    <T> Publisher<T> permitted(Publisher<? extends T> source, boolean mono, CallWeight<? super T> weight) {
      Taken marks = admitted;
      RateEngine local = fallback;
      if (marks == null && local != null) {
        return subscriber -> local.subscribe(source, Operators.toCoreSubscriber(subscriber), mono, weight);
      }
      return subscriber -> {
        ThrottleSubscriber<T> call = new ThrottleSubscriber<T>(Operators.toCoreSubscriber(subscriber),
            RateEngine.this, weight, mono);
        if (marks != null) {
          call.admitted(marks.admittedRequests(), marks.admittedTokens(), marks.at());
        }
        source.subscribe(call);
      };
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
      long eta = store.nanosUntil(1, tokens, false);
      return new LimitExceededException(name(), Reason.WAITED_TOO_LONG, duration(eta), "1 request and " + tokens
          + " tokens did not come" + store.where("free in") + " within "
          + Durations.format(Duration.ofNanos(waitNanos)) + " (" + (deadlineBound() ? "the deadline in force"
          : "its maxWait") + "; " + queued + " calls queued)");
    }
  }
}
