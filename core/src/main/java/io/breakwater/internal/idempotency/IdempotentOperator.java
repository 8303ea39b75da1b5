package io.breakwater.internal.idempotency;

import com.fasterxml.jackson.core.JsonProcessingException;
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
import io.breakwater.idempotency.IdempotencyStore.Done;
import io.breakwater.idempotency.IdempotencyStore.Mismatch;
import io.breakwater.idempotency.IdempotencyStore.Outcome;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.idempotency.StoreUnavailableException;
import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.Durations;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.context.Context;

/**
 * {@code idempotentBy}: claim the key, then run the call as its owner, replay a stored outcome, or wait for the owner.
 * Everything per call is made at subscription.
 */
public final class IdempotentOperator<T> implements Function<Mono<T>, Mono<T>> {

  private static final Logger LOG = Loggers.getLogger(IdempotentOperator.class);

  private final IdempotencyKey key;
  private final IdempotencyPolicy policy;
  private final JavaType resultType;
  private final ObjectReader reader;
  private final ObjectWriter writer;

  /**
   * Resolves the result type's Jackson reader and writer here, at assembly (cached by the policy): Jackson builds
   * them under a lock the first time, and that must not happen on a non-blocking thread in the middle of a call.
   */
  public IdempotentOperator(IdempotencyKey key, IdempotencyPolicy policy, JavaType resultType) {
    this.key = key;
    this.policy = policy;
    this.resultType = resultType;
    this.reader = policy.readerFor(resultType);
    this.writer = policy.writerFor(resultType);
  }

  @Override
  public Mono<T> apply(Mono<T> source) {
    return Mono.deferContextual(ctx -> {
      Deadline deadline = Deadline.from(ctx).orElse(null);
      if (deadline != null && deadline.remainingNanos() > policy.ttl().toNanos()) {
        return Mono.error(new IdempotencyLimitException(key.value(), "The deadline in force has "
            + Durations.format(deadline.remaining()) + " left but idempotency key '" + key.value() + "' is kept only "
            + Durations.format(policy.ttl()) + ": a retry after the key expired would repeat the side effect. "
            + "Raise the policy's ttl above the longest deadline"));
      }
      boolean readOnly = SideEffect.from(ctx).orElse(null) == SideEffect.READ_ONLY;
      Call call = new Call(source, deadline, readOnly, IdempotencyMetrics.of(policy.meterRegistry(), key.tool()));
      return call.attempt(false);
    });
  }

  /** One subscription: its owner token, lease and clock. */
  private final class Call {
    private final Mono<T> source;
    private final String owner = ownerToken();
    private final Duration lease;
    private final Scheduler clock;
    private final IdempotencyMetrics metrics;
    private final IdempotencyStore store = policy.store();

    private final boolean readOnly;

    Call(Mono<T> source, Deadline deadline, boolean readOnly, IdempotencyMetrics metrics) {
      this.source = source;
      this.readOnly = readOnly;
      this.lease = deadline == null ? policy.lease() : deadline.remaining();
      this.clock = deadline == null ? policy.scheduler().get() : deadline.scheduler();
      this.metrics = metrics;
    }

    Mono<T> attempt(boolean waited) {
      return store.claim(key.value(), key.fingerprint(), owner, lease).onErrorResume(this::storeUnavailable)
          .flatMap(claim -> {
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
        if (claim instanceof Mismatch mismatch) {
          metrics.record(IdempotencyMetrics.Outcome.MISMATCH);
          return Mono.error(new IdempotencyKeyMismatchException(key.value(), key.fingerprint(),
              mismatch.storedFingerprint()));
        }
        Busy busy = (Busy) claim;
        if (!waited) {
          metrics.record(IdempotencyMetrics.Outcome.IN_FLIGHT);
        }
        if (policy.failFastWhenInFlight()) {
          return Mono.error(new IdempotencyInFlightException(key.value(), busy.leaseRemaining()));
        }
        Duration wait = busy.leaseRemaining().compareTo(policy.pollInterval()) < 0
            ? busy.leaseRemaining() : policy.pollInterval();
        return Mono.firstWithSignal(store.changed(key.value()), Mono.delay(wait, clock).then())
            .then(Mono.defer(() -> attempt(true)));
      });
    }

    /** Fail closed, unless the policy lets reads fail open. */
    private Mono<IdempotencyStore.Claim> storeUnavailable(Throwable error) {
      if (readOnly && policy.failOpenForReads()) {
        LOG.warn("Idempotency store unavailable; running read-only call '{}' without a claim", key.value(), error);
        return Mono.just(BYPASS);
      }
      return Mono.error(new StoreUnavailableException(key.value(), error));
    }

    private Mono<T> replay(Outcome outcome) {
      if (outcome.isFailure()) {
        return Mono.error(new CachedFailureException(key.value(), outcome.failureKind(), outcome.failureMessage()));
      }
      try {
        T value = reader.readValue(outcome.resultJson());
        return Mono.justOrEmpty(value);
      } catch (JsonProcessingException e) {
        return Mono.error(new IllegalStateException("The stored result of idempotency key '" + key.value()
            + "' cannot be read as " + resultType + ": callers of one key must expect one result type", e));
      }
    }

    private Mono<T> runAsOwner() {
      AtomicBoolean settled = new AtomicBoolean();
      return source
          .contextWrite(Context.of(ContextKeys.IDEMPOTENCY_KEY, key))
          .map(Optional::of)
          .defaultIfEmpty(Optional.empty())
          .doOnNext(v -> settled.set(true))
          .flatMap(this::completeWith)
          .onErrorResume(error -> settled.getAndSet(true) ? Mono.error(error) : failWith(error))
          .doOnCancel(() -> {
            if (!settled.get()) {
              store.release(key.value(), owner).subscribe(null,
                  e -> LOG.warn("Could not release idempotency key '{}' after cancellation", key.value(), e));
            }
          });
    }

    /** Stores the result; the store call is not cancellable, so a result once produced is always recorded. */
    private Mono<T> completeWith(Optional<T> value) {
      String json;
      try {
        json = writer.writeValueAsString(value.orElse(null));
      } catch (JsonProcessingException e) {
        return failWith(new IllegalStateException("The result of idempotency key '" + key.value()
            + "' cannot be written as JSON: " + e.getOriginalMessage(), e));
      }
      if (json.length() > policy.maxResultBytes()) {
        IdempotencyLimitException tooLarge = new IdempotencyLimitException(key.value(), "The result of idempotency "
            + "key '" + key.value() + "' is " + json.length() + " bytes, over the policy's maxResultBytes of "
            + policy.maxResultBytes() + ": return a smaller result (an id) or raise maxResultBytes. The call ran "
            + "once; duplicates get this error instead of running again");
        return store(Outcome.failure(FailureKind.MISCONFIGURED, tooLarge.getMessage()))
            .then(Mono.error(tooLarge));
      }
      return store(Outcome.success(json)).then(Mono.justOrEmpty(value));
    }

    private Mono<T> failWith(Throwable error) {
      FailureKind kind = policy.classifier().classify(error);
      boolean keep = policy.cacheNonRetryableFailures() && isTheDependencysAnswer(kind);
      Mono<?> settle = keep
          ? store(Outcome.failure(kind, String.valueOf(error.getMessage())))
          : Mono.fromFuture(store.release(key.value(), owner).toFuture(), true);
      return settle.onErrorResume(storeError -> {
        error.addSuppressed(storeError);
        return Mono.empty();
      }).then(Mono.error(error));
    }

    /**
     * Whether a failure is the dependency's answer to these arguments, the same every time, so worth replaying. An
     * open breaker, a spent budget, a passed deadline or a bug of ours say nothing about the arguments.
     */
    private static boolean isTheDependencysAnswer(FailureKind kind) {
      return kind == FailureKind.INVALID_ARGUMENT || kind == FailureKind.CLIENT_ERROR || kind == FailureKind.BUSINESS;
    }

    /**
     * Records the outcome. The call has run by now, so a store failure does not fail the caller: the outcome is
     * returned, and the claim lapses when its lease expires.
     */
    private Mono<Boolean> store(Outcome outcome) {
      return Mono.fromFuture(store.complete(key.value(), owner, outcome, policy.ttl()).toFuture(), true)
          .doOnNext(stored -> {
            if (!stored) {
              metrics.record(IdempotencyMetrics.Outcome.FENCED);
              LOG.warn("Idempotency key '{}': the claim was lost before the outcome was stored (lease expired); "
                  + "the outcome of another owner stands", key.value());
            }
          })
          .onErrorResume(storeError -> {
            metrics.record(IdempotencyMetrics.Outcome.UNRECORDED);
            // the store error's class only: its message may quote the command's arguments, which hold the result
            // (Redisson's timeouts do)
            LOG.warn("Idempotency key '{}': the outcome could not be stored ({}); its claim lapses when the lease "
                + "expires", key.value(), storeError.getClass().getName());
            return Mono.just(false);
          });
    }
  }

  /** A claim answer of our own: the store is down and this read-only call runs without one. */
  private static final IdempotencyStore.Claim BYPASS = new IdempotencyStore.Acquired(false);

  private static String ownerToken() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    return Long.toHexString(random.nextLong()) + Long.toHexString(random.nextLong());
  }
}
