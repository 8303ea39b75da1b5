package io.breakwater.composition;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.hedgedBy;
import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.sideEffect;
import static io.breakwater.Breakwater.streamTimeouts;
import static io.breakwater.Breakwater.throttledBy;
import static io.breakwater.Breakwater.withDeadline;
import static io.breakwater.Breakwater.withRetryBudget;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.composition.CompositionCase.Layer;
import io.breakwater.composition.CompositionCase.SideEffectChoice;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.hedge.HedgePolicy;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.retry.RetryStopReason;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.testing.TaskCountingScheduler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.context.Context;

/**
 * Runs one {@link CompositionCase} in virtual time and returns the invariants it broke (none when it passed). The
 * operators are applied inside the function that makes each call, as users write them; the limits, breaker, hedge
 * policy and idempotency store are shared by the callers, as in an application.
 */
final class CompositionRun {

  /**
   * Whether the write rule of issue 35 is on this branch (merged from main): a write inside {@code idempotentBy} is
   * re-sent only after a failure that proves it was not processed, a cancelled or unknown write keeps its key, a
   * deadline that ends a call always gives a {@code DeadlineExceededException}, and {@code DEDUPLICATED_WRITE} exists.
   * While false, the generator pairs {@code idempotentBy} only with reads and idempotent writes, never declares
   * {@code DEDUPLICATED_WRITE}, and a retry that gives up for the deadline may still end with a
   * {@code RetryExhaustedException}. Every invariant is checked either way.
   */
  static final boolean WRITE_RULE_ON_MAIN = true;

  private final CompositionCase c;
  private final VirtualTimeScheduler clock;
  private final TaskCountingScheduler timers;
  private final Supplier<Scheduler> scheduler;
  private final FaultScriptedDependency dependency;
  private final List<String> violations = new ArrayList<>();

  private final CircuitBreaker breaker;
  private final ConcurrencyLimit limit;
  private final RateLimit rate;
  private final HedgePolicy hedge;
  private final IdempotencyPolicy idempotency;
  private final List<RetryPolicy> retries = new ArrayList<>();

  private CompositionRun(CompositionCase c, VirtualTimeScheduler clock) {
    this.c = c;
    this.clock = clock;
    this.timers = new TaskCountingScheduler(clock);
    this.scheduler = () -> timers;
    this.dependency = new FaultScriptedDependency(c.script(), timers);
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    this.breaker = CircuitBreaker.builder("composition").minimumCalls(2).scheduler(scheduler).meterRegistry(meters)
        .build();
    this.limit = ConcurrencyLimit.builder("composition").fixed(c.permits()).maxWait(Duration.ofSeconds(5))
        .scheduler(scheduler).build();
    this.rate = RateLimit.builder("composition").requests(c.requestsPerSecond(), Duration.ofSeconds(1))
        .maxWait(Duration.ofSeconds(5)).scheduler(scheduler).build();
    this.hedge = HedgePolicy.builder().name("composition").delay(Duration.ofMillis(c.hedgeDelayMillis()))
        .maxHedges(c.maxHedges()).budget(1.0).scheduler(scheduler).meterRegistry(meters).eventLog(event -> { })
        .build();
    this.idempotency = IdempotencyPolicy.builder(IdempotencyStore.inMemory(1 << 20, scheduler))
        .scheduler(scheduler).meterRegistry(meters).build();
    for (int maxRetries : c.retries()) {
      retries.add(RetryPolicy.builder().name("composition-" + retries.size()).maxRetries(maxRetries)
          .backoff(Backoff.fixed(Duration.ofMillis(c.backoffMillis()))).scheduler(scheduler)
          .random(() -> new SplittableRandom(35)).meterRegistry(meters).build());
    }
  }

  /** The invariants {@code c} broke. */
  static List<String> violations(CompositionCase c) {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    VirtualTimeScheduler.set(clock);   // a default scheduler (Schedulers.parallel()) is this virtual clock too
    try {
      return new CompositionRun(c, clock).run();
    } finally {
      VirtualTimeScheduler.reset();
    }
  }

  /** The call caller {@code caller} makes, with its operators applied when it is made. */
  private Mono<String> call(int caller) {
    String key = c.sameKey() ? "key-0" : "key-" + caller;
    Mono<String> call = dependency.call(key);
    int retry = 0;
    for (Layer layer : c.layers()) {
      call = switch (layer) {
        case PER_CALL_TIMEOUT -> call.transformDeferred(perCallTimeout());
        case RETRY -> call.transformDeferred(retryWithBudget(retries.get(retry++)));
        case GUARD -> call.transformDeferred(guardedBy(breaker));
        case IDEMPOTENT -> call.transformDeferred(idempotentBy(IdempotencyKey.of("composition.write",
            Map.of("key", key)), idempotency, String.class));
        case HEDGE -> call.transformDeferred(hedgedBy(hedge));
        case LIMIT -> call.transformDeferred(limitedBy(limit));
        case THROTTLE -> call.transformDeferred(throttledBy(rate));
        case STREAM_TIMEOUTS -> call.transformDeferred(streamTimeouts(StreamTimeouts.builder()
            .firstItem(Duration.ofMillis(c.firstItemMillis())).scheduler(scheduler).build()));
        case INNER_DEADLINE -> call.transformDeferred(withDeadline(DeadlineSpec.builder(
            Duration.ofMillis(c.deadlineMillis() / 2 + 1)).scheduler(scheduler).build()));
      };
    }
    if (c.sideEffect() != SideEffectChoice.UNDECLARED) {
      call = call.transformDeferred(sideEffect(SideEffect.valueOf(c.sideEffect().name())));
    }
    if (c.taskRetries() >= 0) {
      call = call.transformDeferred(withRetryBudget(c.taskRetries()));
    }
    return call.transformDeferred(withDeadline(DeadlineSpec.builder(Duration.ofMillis(c.deadlineMillis()))
        .scheduler(scheduler).build()))
        .contextWrite(Context.of(FaultScriptedDependency.CALLER, caller));
  }

  private List<String> run() {
    List<Caller> callers = new ArrayList<>();
    for (int i = 0; i < c.callers(); i++) {
      Caller caller = new Caller(i);
      callers.add(caller);
      int index = i;
      Mono.defer(() -> call(index)).subscribe(caller);
      long leaveAt = c.cancelAtMillis().get(i);
      if (leaveAt >= 0) {
        clock.schedule(caller::leave, leaveAt, TimeUnit.MILLISECONDS);
      }
    }
    clock.advanceTimeBy(Duration.ofMillis(c.deadlineMillis() + 1));
    for (Caller caller : callers) {
      caller.checkEnded();
    }
    checkAttempts(callers);
    checkWrites();
    checkReleased("once every call has ended");
    clock.advanceTimeBy(Duration.ofDays(1));
    checkReleased("a day later");
    check(timers.pendingTasks() == 0, timers.pendingTasks() + " timer(s) still pending a day after every call "
        + "ended");
    return violations;
  }

  private void checkAttempts(List<Caller> callers) {
    long retryAllowance = c.retries().stream().mapToLong(Integer::longValue).sum();
    if (c.taskRetries() >= 0) {
      retryAllowance = Math.min(retryAllowance, c.taskRetries());
    }
    long perAttempt = c.layers().contains(Layer.HEDGE) ? 1 + c.maxHedges() : 1;
    long most = (1 + retryAllowance) * perAttempt;
    for (Caller caller : callers) {
      long attempts = dependency.attempts().stream().filter(a -> a.caller() == caller.index).count();
      check(attempts <= most, "caller " + caller.index + " made " + attempts + " attempts; the budgets in force "
          + "allow " + most + " (retries " + c.retries() + ", task budget " + c.taskRetries() + ", hedges x"
          + perAttempt + ")");
      long late = dependency.attempts().stream()
          .filter(a -> a.caller() == caller.index && a.atMillis() > caller.endedAtMillis).count();
      check(late == 0, "caller " + caller.index + " ended at " + caller.endedAtMillis + " ms, and " + late
          + " attempt(s) of it started later");
    }
  }

  private void checkWrites() {
    boolean declaredWrite = c.sideEffect() == SideEffectChoice.NON_IDEMPOTENT_WRITE;
    boolean resends = c.layers().contains(Layer.RETRY) || c.layers().contains(Layer.HEDGE);
    if (declaredWrite && resends && !c.layers().contains(Layer.IDEMPOTENT)) {
      check(dependency.attempts().isEmpty(), "a NON_IDEMPOTENT_WRITE retried or hedged outside idempotentBy reached "
          + "the dependency " + dependency.attempts().size() + " time(s); it must be refused at subscription");
    }
    if (c.writeOnceByKey()) {
      dependency.writes().forEach((key, times) -> check(times <= 1, "the write of " + key + " reached the "
          + "dependency " + times + " times (a NON_IDEMPOTENT_WRITE inside idempotentBy: at most once per key)"));
    }
  }

  private void checkReleased(String when) {
    check(limit.inFlight() == 0, when + ": " + limit.inFlight() + " permit(s) of limitedBy still held");
    check(limit.queued() == 0, when + ": " + limit.queued() + " call(s) still queued in limitedBy");
    check(rate.queued() == 0, when + ": " + rate.queued() + " call(s) still queued in throttledBy");
    check(dependency.open() == 0, when + ": " + dependency.open() + " attempt(s) still open at the dependency");
  }

  private void check(boolean holds, String violation) {
    if (!holds) {
      violations.add(violation);
    }
  }

  /** A caller: records every signal, and the instant it ended. */
  private final class Caller extends BaseSubscriber<String> {
    final int index;
    int values;
    int terminals;
    boolean signalAfterTerminal;
    boolean left;
    long endedAtMillis = Long.MAX_VALUE;
    long endedAtNanos = Long.MAX_VALUE;
    @Nullable Throwable error;

    Caller(int index) {
      this.index = index;
    }

    void leave() {
      if (terminals == 0 && !left) {
        left = true;
        ended();
        dispose();
      }
    }

    private void ended() {
      endedAtMillis = clock.now(TimeUnit.MILLISECONDS);
      endedAtNanos = clock.now(TimeUnit.NANOSECONDS);
    }

    @Override
    protected void hookOnSubscribe(Subscription subscription) {
      subscription.request(Long.MAX_VALUE);
    }

    @Override
    protected void hookOnNext(String value) {
      if (terminals > 0) {
        signalAfterTerminal = true;
      }
      values++;
    }

    @Override
    protected void hookOnComplete() {
      terminal();
    }

    @Override
    protected void hookOnError(Throwable failure) {
      error = failure;
      terminal();
    }

    private void terminal() {
      if (terminals++ > 0) {
        signalAfterTerminal = true;
      } else if (!left) {
        ended();
      }
    }

    void checkEnded() {
      String who = "caller " + index;
      check(!signalAfterTerminal, who + ": a signal after its terminal one");
      check(terminals <= 1, who + ": " + terminals + " terminal signals");
      check(values <= 1, who + ": " + values + " values from a Mono");
      if (left) {
        return;
      }
      check(terminals == 1, who + ": never ended (no terminal signal " + (c.deadlineMillis() + 1) + " ms after "
          + "subscription, past its deadline of " + c.deadlineMillis() + " ms)");
      long deadlineNanos = TimeUnit.MILLISECONDS.toNanos(c.deadlineMillis());
      check(endedAtNanos <= deadlineNanos, who + ": ended at " + endedAtNanos + " ns, after its deadline ("
          + deadlineNanos + " ns)");
      Throwable e = error;
      if (endedAtNanos == deadlineNanos && e != null) {
        check(e instanceof TimeoutException, who + ": ended by the deadline with " + e
            + ", not a TimeoutException");
      }
      if (WRITE_RULE_ON_MAIN && e instanceof RetryExhaustedException r) {
        check(r.reason() != RetryStopReason.DEADLINE, who + ": the retry gave up for the deadline with " + e
            + "; a call the deadline ends gets a DeadlineExceededException");
      }
    }
  }
}
