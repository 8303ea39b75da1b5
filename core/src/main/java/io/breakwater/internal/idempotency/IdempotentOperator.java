package io.breakwater.internal.idempotency;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import io.breakwater.deadline.Deadline;
import io.breakwater.failure.FailureKind;
import io.breakwater.idempotency.CachedFailureException;
import io.breakwater.idempotency.IdempotencyInFlightException;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyKeyMismatchException;
import io.breakwater.idempotency.IdempotencyLimitException;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.IdempotencyStore.Acquired;
import io.breakwater.idempotency.IdempotencyStore.Busy;
import io.breakwater.idempotency.IdempotencyStore.Claim;
import io.breakwater.idempotency.IdempotencyStore.Done;
import io.breakwater.idempotency.IdempotencyStore.Mismatch;
import io.breakwater.idempotency.IdempotencyStore.Outcome;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.idempotency.StoreUnavailableException;
import io.breakwater.idempotency.UnrecordedOutcome;
import io.breakwater.idempotency.WriteOutcomeUnknownException;
import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.Durations;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.StoreCallBound;
import io.breakwater.internal.Utf8;
import io.breakwater.internal.failure.WriteOutcome;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.context.Context;
import reactor.util.context.ContextView;
import reactor.util.retry.Retry;
import reactor.util.retry.RetryBackoffSpec;

/**
 * {@code idempotentBy}: claim the key, then run the call as its owner, replay a stored outcome, or wait for the owner.
 * Everything per call is made at subscription.
 *
 * <p>Each call moves through {@code IDLE → CLAIMING → OWNING → RESULT} (or {@code ENDED}); every step is one
 * compare-and-set, so a cancel racing a claim's reply or a result settles exactly one way: a claim granted after a
 * cancel is released, a cancel after a result changes nothing (only {@code complete} may follow a result).
 */
public final class IdempotentOperator<T> implements Function<Mono<T>, Mono<T>> {

  private static final Logger LOG = Loggers.getLogger(IdempotentOperator.class);

  /** First and longest pause between attempts to store an outcome (jittered, doubling). */
  static final Duration COMPLETE_RETRY_FIRST = Duration.ofMillis(100);
  static final Duration COMPLETE_RETRY_CAP = Duration.ofSeconds(2);
  /** The shortest wait of a duplicate before it looks again, whatever the store says is left of the lease. */
  private static final Duration MIN_POLL = Duration.ofMillis(1);
  /** The completion's retries, without the call's clock and lease, which each call adds to its copy. */
  private static final RetryBackoffSpec COMPLETE_RETRIES = Retry.backoff(Long.MAX_VALUE, COMPLETE_RETRY_FIRST)
      .maxBackoff(COMPLETE_RETRY_CAP);

  private static final int IDLE = 0;
  private static final int CLAIMING = 1;
  private static final int OWNING = 2;
  private static final int RESULT = 3;
  private static final int ENDED = 4;

  private final IdempotencyKey key;
  private final IdempotencyPolicy policy;
  private final JavaType resultType;
  private final ObjectReader reader;
  private final ObjectWriter writer;
  private final String storeKey;
  private final String storeFingerprint;
  /** How messages and logs name the key: a keyed hash, computed the first time a message needs it. */
  private @Nullable String tag;
  private final Duration storeBound;

  /**
   * Resolves the result type's Jackson reader and writer here, at assembly (cached by the policy): Jackson builds
   * them under a lock the first time, and that must not happen on a non-blocking thread in the middle of a call. The
   * keyed hashes of the key the store sees are computed here too; its tag, for messages only, when one needs it.
   */
  public IdempotentOperator(IdempotencyKey key, IdempotencyPolicy policy, JavaType resultType) {
    this.key = key;
    this.policy = policy;
    this.resultType = resultType;
    this.reader = policy.readerFor(resultType);
    this.writer = policy.writerFor(resultType);
    this.storeKey = policy.storeKey(key);
    this.storeFingerprint = policy.storeFingerprint(key);
    Duration thirdOfLease = thirdOf(policy.lease());
    this.storeBound = policy.storeTimeout().compareTo(thirdOfLease) < 0 || thirdOfLease.isZero()
        ? policy.storeTimeout() : thirdOfLease;
  }

  /**
   * A third of a non-negative duration, rounded down to the nanosecond, without {@link Duration#dividedBy(long)}'s
   * BigDecimal arithmetic (a profile of Redis hits found it in every call's set-up).
   */
  static Duration thirdOf(Duration duration) {
    long seconds = duration.getSeconds();
    long leftOver = (seconds % 3) * 1_000_000_000L;   // time-arithmetic: at most 2 s of nanoseconds
    return Duration.ofSeconds(seconds / 3, (leftOver + duration.getNano()) / 3);
  }

  private String tag() {
    String named = tag;
    if (named == null) {
      named = policy.tag(key);
      tag = named;      // a race computes the same String twice, harmlessly
    }
    return named;
  }

  @Override
  public Mono<T> apply(Mono<T> source) {
    return Mono.deferContextual(ctx -> {
      Deadline deadline = Deadline.from(ctx).orElse(null);
      if (deadline != null && deadline.remainingNanos() > Saturating.nanos(policy.ttl())) {
        return Mono.error(new IdempotencyLimitException(tag(), "The deadline in force has "
            + Durations.format(deadline.remaining()) + " left but idempotency key '" + tag() + "' is kept only "
            + Durations.format(policy.ttl()) + ": a retry after the key expired would repeat the side effect. "
            + "Raise the policy's ttl above the longest deadline"));
      }
      SideEffect declared = ctx.getOrDefault(ContextKeys.SIDE_EFFECT, null);
      Scheduler clock = deadline == null ? policy.scheduler().get() : deadline.scheduler();
      Call call = new Call(source, ctx, clock, declared, IdempotencyMetrics.of(policy.meterRegistry(), key.tool()));
      return call.run().doOnCancel(call::cancel);
    });
  }

  /** One subscription: its owner token, lease, clock and state. */
  private final class Call {
    private final Mono<T> source;
    private final String owner = ownerToken();
    private final Scheduler clock;
    private final IdempotencyMetrics metrics;
    private final IdempotencyStore store = policy.store();
    private final boolean readOnly;
    /** A write sent at most once: a cancel or an unknown outcome after it was sent keeps its key. */
    private final boolean onceOnly;
    /** Whether the call was subscribed as owner: from then on the write may have gone out. */
    private volatile boolean sent;
    private final Context storeContext;
    private final OwnerLease lease;
    private final AtomicInteger state = new AtomicInteger(IDLE);
    private boolean waited;

    Call(Mono<T> source, ContextView ctx, Scheduler clock, @Nullable SideEffect declared, IdempotencyMetrics metrics) {
      this.source = source;
      this.readOnly = declared == SideEffect.READ_ONLY;
      this.onceOnly = declared == null || declared == SideEffect.NON_IDEMPOTENT_WRITE;
      this.clock = clock;
      this.metrics = metrics;
      // every store call is bounded by storeBound here (StoreCallBound): a store need not arm a second timer
      this.storeContext = Context.of(ctx).put(ContextKeys.STORE_CALL_BOUND, storeBound);
      this.lease = new OwnerLease(key, owner, clock, policy.lease());
    }

    /**
     * Claims until the answer is not {@link Busy}. Only a call that found the key busy pays for the loop: waiting
     * duplicates go round through {@code repeatWhenEmpty}, which resubscribes from a loop, so the stack stays as deep
     * after 100 000 polls as after one; a hit or a miss (most calls) sends one claim without it.
     */
    Mono<T> run() {
      return claim()
          .flatMap(first -> first instanceof Busy busy
              ? awaitChange(busy).switchIfEmpty(claimUntilNotBusy())
              : Mono.just(first))
          .flatMap(this::onClaim);
    }

    /** Claims again after every change (or wait) until the answer is not {@link Busy}. */
    private Mono<Claim> claimUntilNotBusy() {
      return claim().flatMap(this::unlessBusy).repeatWhenEmpty(Integer.MAX_VALUE, repeats -> repeats);
    }

    /** {@code claim}, or, when it is {@link Busy}, empty once the key may have changed. */
    private Mono<Claim> unlessBusy(Claim claim) {
      return claim instanceof Busy busy ? awaitChange(busy) : Mono.just(claim);
    }

    private Mono<Claim> claim() {
      return Mono.defer(this::claimOnce).onErrorResume(this::storeUnavailable);
    }

    /**
     * Sends the claim and sees its reply whatever happens downstream: a reply that grants the claim after the caller
     * cancelled is released at once, and a claim whose reply never came (an error or a timeout: the store may still
     * apply it) is released too, as far as the owner token allows.
     */
    private Mono<Claim> claimOnce() {
      return Mono.create(sink -> {
        if (!state.compareAndSet(IDLE, CLAIMING)) {
          sink.error(new IllegalStateException("idempotentBy was cancelled"));
          return;
        }
        long sentAt = lease.now();
        StoreCallBound.within(store.claim(storeKey, storeFingerprint, owner, policy.lease()), storeBound, clock)
            .contextWrite(storeContext)
            .subscribe(claim -> {
              if (claim instanceof Acquired acquired) {
                if (state.compareAndSet(CLAIMING, OWNING)) {
                  lease.acquired(sentAt, acquired.tookOverExpired());
                  sink.success(claim);
                } else {
                  release("the caller cancelled while the claim's reply was on its way");
                }
              } else {
                state.compareAndSet(CLAIMING, IDLE);
                sink.success(claim);
              }
            }, error -> {
              boolean live = state.compareAndSet(CLAIMING, IDLE);
              releaseUnansweredClaim();
              if (live) {
                sink.error(error);
              }
            });
      });
    }

    /** Fail closed, unless the policy lets reads fail open. */
    private Mono<Claim> storeUnavailable(Throwable error) {
      if (readOnly && policy.failOpenForReads()) {
        LOG.warn("Idempotency store unavailable ({}); running read-only call '{}' without a claim",
            error.getClass().getName(), tag());
        return Mono.just(BYPASS);
      }
      return Mono.error(new StoreUnavailableException(tag(), error));
    }

    private Mono<Claim> awaitChange(Busy busy) {
      if (!waited) {
        waited = true;
        metrics.record(IdempotencyMetrics.Outcome.IN_FLIGHT);
      }
      if (policy.failFastWhenInFlight()) {
        return Mono.error(new IdempotencyInFlightException(tag(), busy.leaseRemaining()));
      }
      Duration wait = busy.leaseRemaining().compareTo(policy.pollInterval()) < 0
          ? busy.leaseRemaining() : policy.pollInterval();
      // at least a millisecond: a store may say a lease has 0 ms (or less) left, and the next look would come at once
      return Mono.firstWithSignal(store.changed(storeKey).onErrorResume(e -> Mono.never()),
              Mono.delay(wait.compareTo(MIN_POLL) < 0 ? MIN_POLL : wait, clock).then())
          .then(Mono.empty());
    }

    private Mono<T> onClaim(Claim claim) {
      if (claim == BYPASS) {
        metrics.record(IdempotencyMetrics.Outcome.BYPASSED);
        return source;
      }
      if (claim instanceof Done done) {
        metrics.record(IdempotencyMetrics.Outcome.HIT);
        return replay(done.outcome());
      }
      if (claim instanceof Acquired acquired) {
        metrics.record(acquired.tookOverExpired()
            ? IdempotencyMetrics.Outcome.EXPIRED : IdempotencyMetrics.Outcome.MISS);
        return runAsOwner();
      }
      metrics.record(IdempotencyMetrics.Outcome.MISMATCH);
      return Mono.error(new IdempotencyKeyMismatchException(tag()));
    }

    private Mono<T> replay(Outcome outcome) {
      FailureKind failed = outcome.failureKind();   // non-null exactly when outcome.isFailure()
      if (failed == FailureKind.OUTCOME_UNKNOWN) {
        return Mono.error(new WriteOutcomeUnknownException(tag(), outcome.failureMessage()));
      }
      if (failed != null) {
        return Mono.error(new CachedFailureException(tag(), failed, outcome.failureMessage()));
      }
      try {
        T value = reader.readValue(outcome.resultJson());
        return Mono.justOrEmpty(value);
      } catch (Exception e) {
        return Mono.error(new IllegalStateException("The stored result of idempotency key '" + tag()
            + "' cannot be read as " + resultType.getRawClass().getName() + " (" + e.getClass().getSimpleName()
            + "): callers of one key must expect one result type"));
      }
    }

    private Mono<T> runAsOwner() {
      lease.startRenewing(store, storeKey, storeBound, storeContext);
      return Mono.defer(() -> {
            sent = true;
            return source;
          })
          .contextWrite(Context.of(ContextKeys.IDEMPOTENCY_KEY, key, ContextKeys.IDEMPOTENCY_SENT_KEY,
              policy.sentKey(key), ContextKeys.IDEMPOTENCY_CONTEXT, lease))
          .map(Optional::of)
          .defaultIfEmpty(Optional.empty())
          .flatMap(this::onResult)
          .onErrorResume(error -> state.get() == OWNING ? onFailure(error) : Mono.error(error));
    }

    /**
     * The call produced a value: from here on only {@code complete} may follow, whatever cancels arrive. It is
     * stored in the background and the caller gets the value at once, unless the policy's background completions
     * are all taken ({@link #storeOutcome}). A value that cannot be kept (not writable as
     * JSON, or too large) is stored as a refusal, so that duplicates get the refusal and never run the call again.
     */
    private Mono<T> onResult(Optional<T> value) {
      if (!state.compareAndSet(OWNING, RESULT)) {
        return Mono.empty();
      }
      String json;
      try {
        json = writer.writeValueAsString(value.orElse(null));
      } catch (Exception e) {
        return refuseToKeep("cannot be written as JSON (" + e.getClass().getSimpleName() + "): give "
            + resultType.getRawClass().getName() + " a form the policy's objectMapper can write and read, or return "
            + "an id");
      }
      long bytes = Utf8.length(json);
      if (bytes > policy.maxResultBytes()) {
        return refuseToKeep("is " + bytes + " bytes of JSON (UTF-8), over the policy's maxResultBytes of "
            + policy.maxResultBytes() + ": return a smaller result (an id) or raise maxResultBytes");
      }
      return storeOutcome(Outcome.success(json)).then(Mono.justOrEmpty(value));
    }

    private Mono<T> refuseToKeep(String why) {
      IdempotencyLimitException refusal = new IdempotencyLimitException(tag(), "The result of idempotency key '" + tag()
          + "' " + why + ". The call ran once; duplicates get this error instead of running again");
      return storeOutcome(Outcome.failure(FailureKind.MISCONFIGURED, refusal.getMessage())).then(Mono.error(refusal));
    }

    private Mono<T> onFailure(Throwable error) {
      if (onceOnly && sent && WriteOutcome.mayHaveHappened(policy.classifier(), error)) {
        return state.compareAndSet(OWNING, RESULT)
            ? storeOutcome(unknownOutcome("its call failed: " + error.getClass().getSimpleName()))
                .then(Mono.error(error))
            : Mono.error(error);
      }
      FailureKind kind = policy.classifier().classify(error);
      if (policy.cacheNonRetryableFailures() && isTheDependencysAnswer(kind)) {
        return state.compareAndSet(OWNING, RESULT)
            ? storeOutcome(Outcome.failure(kind, boundedMessage(error))).then(Mono.error(error))
            : Mono.error(error);
      }
      if (!state.compareAndSet(OWNING, ENDED)) {
        return Mono.error(error);
      }
      lease.end();
      return detached(store.release(storeKey, owner))
          .onErrorResume(storeError -> {
            error.addSuppressed(new StoreUnavailableException(tag(), storeError));
            return Mono.empty();
          })
          .then(Mono.error(error));
    }

    /** What duplicates of a write that may have happened are told. */
    private Outcome unknownOutcome(String what) {
      return Outcome.failure(FailureKind.OUTCOME_UNKNOWN, what);
    }

    /**
     * The caller cancelled: a claim held without a result is released, unless it guards a write that was sent (its
     * key is recorded as of unknown outcome); a claim being sent is seen to.
     */
    void cancel() {
      for (;;) {
        int now = state.get();
        if (now == IDLE || now == CLAIMING) {
          if (state.compareAndSet(now, ENDED)) {
            return;       // a claim on its way is released by its reply's handler
          }
        } else if (now == OWNING) {
          if (onceOnly && sent) {
            if (state.compareAndSet(now, RESULT)) {
              storeOutcome(unknownOutcome("its caller cancelled after it was sent"));
              return;
            }
          } else if (state.compareAndSet(now, ENDED)) {
            lease.end();
            release("the owner was cancelled");
            return;
          }
        } else {
          return;         // a result exists (only complete may follow), or the claim was already given up
        }
      }
    }

    private void release(String why) {
      detached(store.release(storeKey, owner)).subscribe(null, e -> LOG.warn("Could not release idempotency key "
          + "'{}' after {} ({}); it is free again when its lease ends", tag(), why, e.getClass().getName()));
    }

    /**
     * A claim that errored or timed out may still be applied by the store (a paused server runs it when it resumes):
     * release it now, and once more a store timeout later in case the claim lands after the first release.
     */
    private void releaseUnansweredClaim() {
      Mono<Boolean> release = StoreCallBound.within(store.release(storeKey, owner), storeBound, clock)
          .contextWrite(storeContext)
          .onErrorResume(e -> Mono.just(false));
      release.then(Mono.delay(storeBound, clock)).then(release).subscribe();
    }

    /**
     * Stores the outcome, retried with jittered backoff until it is stored, the store answers that the claim is lost,
     * or the lease (as last confirmed) ends, whatever the caller's deadline: the retries run without it, each bounded
     * by the store timeout. Renewal stops at the result, so a store that keeps refusing the completion cannot keep the
     * claim forever.
     *
     * <p>It runs in the background (the returned Mono is empty at once) while the policy's
     * {@link BackgroundCompletions} has room; otherwise the returned Mono completes when it ends, so the caller's value
     * waits for its own outcome and a sustained load cannot queue completions faster than the store takes them. A
     * caller that cancels that wait leaves the completion running: only {@code complete} may follow a result.
     */
    private Mono<Void> storeOutcome(Outcome outcome) {
      lease.end();      // no renewal past the result: the retries below are bounded by the lease as last confirmed
      BackgroundCompletions background = BackgroundCompletions.of(policy);
      boolean inBackground = background.tryStart();
      Sinks.Empty<Void> ended = inBackground ? null : Sinks.empty();
      int[] attempts = new int[1];
      Context withoutDeadline = storeContext.delete(ContextKeys.DEADLINE);
      Mono.defer(() -> {
            attempts[0]++;
            return StoreCallBound.within(store.complete(storeKey, owner, outcome, policy.ttl()), storeBound, clock);
          })
          .retryWhen(COMPLETE_RETRIES.scheduler(clock).filter(error -> lease.confirmedNanosLeft() > 0))
          .contextWrite(withoutDeadline)
          .doFinally(signal -> {
            if (ended == null) {
              background.finished();
            } else {
              ended.tryEmitEmpty();
            }
          })
          .subscribe(stored -> {
            if (!stored) {
              unrecorded(UnrecordedOutcome.Reason.FENCED, attempts[0], null);
            }
          }, error -> {
            unrecorded(UnrecordedOutcome.Reason.STORE_UNAVAILABLE, attempts[0], error);
          });
      return ended == null ? Mono.empty() : ended.asMono();
    }

    private void unrecorded(UnrecordedOutcome.Reason reason, int attempts, @Nullable Throwable error) {
      metrics.record(reason == UnrecordedOutcome.Reason.FENCED
          ? IdempotencyMetrics.Outcome.FENCED : IdempotencyMetrics.Outcome.UNRECORDED);
      try {
        policy.onUnrecorded().accept(new UnrecordedOutcome(key, tag(), reason, attempts, error));
      } catch (RuntimeException e) {
        LOG.warn("onUnrecorded failed for idempotency key '{}' ({})", tag(), e.getClass().getName());
      }
    }

    /** Runs a store call to its end even if the caller cancels, with the caller's Context and a bound of its own. */
    private <R> Mono<R> detached(Mono<R> operation) {
      Sinks.One<R> reply = Sinks.one();
      StoreCallBound.within(operation, storeBound, clock).contextWrite(storeContext)
          .subscribe(reply::tryEmitValue, reply::tryEmitError, reply::tryEmitEmpty);
      return reply.asMono();
    }
  }

  /**
   * Whether a failure is the dependency's answer to these arguments, the same every time, so worth replaying. An
   * open breaker, a spent budget, a passed deadline or a bug of ours say nothing about the arguments.
   */
  private static boolean isTheDependencysAnswer(FailureKind kind) {
    return kind == FailureKind.INVALID_ARGUMENT || kind == FailureKind.CLIENT_ERROR || kind == FailureKind.BUSINESS;
  }

  /** A kept failure's message, cut to {@link IdempotencyPolicy#MAX_FAILURE_MESSAGE_CHARS} characters. */
  static String boundedMessage(Throwable error) {
    String message = String.valueOf(error.getMessage());
    int max = IdempotencyPolicy.MAX_FAILURE_MESSAGE_CHARS;
    if (message.length() <= max) {
      return message;
    }
    int end = Character.isHighSurrogate(message.charAt(max - 1)) ? max - 1 : max;
    return message.substring(0, end) + "…";
  }

  /** A claim answer of our own: the store is down and this read-only call runs without one. */
  private static final Claim BYPASS = new Acquired(false);

  private static String ownerToken() {
    return OwnerTokens.next();
  }
}
