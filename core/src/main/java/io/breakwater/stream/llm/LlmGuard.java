package io.breakwater.stream.llm;

import io.breakwater.Breakwater;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.hedge.HedgePolicy;
import io.breakwater.internal.stream.llm.FramingBuffer;
import io.breakwater.limit.CallWeight;
import io.breakwater.limit.RateLimit;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.retry.RetryStopReason;
import io.breakwater.stream.StreamTimeouts;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The guards of one model's requests made through a third-party client (Spring AI, LangChain4j), composed from
 * Breakwater's operators, outermost first:
 *
 * <pre>
 * deadline (the guard's budget, or the one in the subscriber's Reactor Context; nesting only tightens)
 *   → retry (retryWithBudget: a stream only before its first content; the retry budgets, Retry-After, no nested retries)
 *     → first-token hedge, if set (hedgedBy on the first content)
 *       → breaker (guardedBy: every attempt; an open breaker answers without a request)
 *         → rate limit, if set (throttledBy: a request and the call's tokens for each attempt)
 *           → timeouts (a stream: first content, then no stall longer than idle; a call: perCallTimeout)
 *             → the attempt
 * </pre>
 *
 * <pre>{@code
 * LlmGuard guard = LlmGuard.builder("openai").deadline(Duration.ofSeconds(60)).build();
 * Flux<Chunk> answer = guard.stream(Flux.defer(() -> client.stream(request)), Chunk::hasText);
 * }</pre>
 *
 * <p>A stream cut after its content fails with the cause itself (an {@link io.breakwater.stream.IdleTimeoutException},
 * a dropped connection), not with the retry's report that it could not retry a stream that had emitted. Defaults: the
 * timeouts of the deadline in force (12 s to the first content and 3 s idle without one), {@value #DEFAULT_MAX_RETRIES}
 * retries (policy {@code llm:name}), {@code CircuitBreaker.ofDefaults("llm:" + name)}, {@link #DEFAULT_CALL_TIMEOUT}
 * for each attempt of a blocking call, no hedge, no rate limit, blocking calls on {@code Schedulers.boundedElastic()}.
 * Immutable and thread-safe: build one per model and share it.
 */
public final class LlmGuard {

  /** The default per-attempt bound of a blocking call: 2 minutes (less when the deadline leaves less). */
  public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofMinutes(2);
  /** The default retries of a request. */
  public static final int DEFAULT_MAX_RETRIES = 2;

  private final String name;
  private final @Nullable Duration deadline;
  private final StreamTimeouts timeouts;
  private final Duration callTimeout;
  private final RetryPolicy retry;
  private final CircuitBreaker breaker;
  private final @Nullable HedgePolicy hedge;
  private final @Nullable RateLimit rateLimit;
  private final Scheduler blockingCalls;

  private LlmGuard(Builder b) {
    this.name = b.name;
    this.deadline = b.deadline;
    this.timeouts = b.timeouts;
    this.callTimeout = b.callTimeout;
    this.retry = b.retry != null ? b.retry
        : RetryPolicy.builder().name("llm:" + b.name).maxRetries(DEFAULT_MAX_RETRIES).build();
    this.breaker = b.breaker != null ? b.breaker : CircuitBreaker.ofDefaults("llm:" + b.name);
    this.hedge = b.hedge;
    this.rateLimit = b.rateLimit;
    this.blockingCalls = b.blockingCalls;
  }

  /** The guard of the model {@code name} with every default. */
  public static LlmGuard of(String name) {
    return builder(name).build();
  }

  /** A builder for the model {@code name}, which names its breaker, retry policy and meters ({@code llm:name}). */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  public String name() {
    return name;
  }

  /** The breaker every attempt passes. */
  public CircuitBreaker breaker() {
    return breaker;
  }

  /** Where a client's blocking attempts should run. */
  public Scheduler blockingCalls() {
    return blockingCalls;
  }

  /** {@link #stream(Flux, Predicate, CallWeight)} weighing one request per attempt. */
  public <T> Flux<T> stream(Flux<T> attempt, Predicate<? super T> isContent) {
    return stream(attempt, isContent, CallWeight.oneRequest());
  }

  /**
   * A guarded stream whose attempts are subscriptions of {@code attempt} (make it lazy: {@code Flux.defer}). Items for
   * which {@code isContent} is false are framing: an attempt's framing before its first content is held and delivered
   * with it (or at the attempt's end), so a retry starts only when nothing was delivered; framing never resets the
   * idle clock nor wins a hedge. With a rate limit, each attempt takes {@code weight}.
   */
  public <T> Flux<T> stream(Flux<T> attempt, Predicate<? super T> isContent, CallWeight<? super T> weight) {
    Flux<T> timed = FramingBuffer.heldUntilContent(attempt, isContent)
        .transform(Breakwater.streamTimeouts(timeouts, isContent));
    return Flux.from(guarded(timed, weight, hedge == null ? null : Breakwater.hedgedBy(hedge, isContent)))
        .onErrorMap(LlmGuard::afterContent);
  }

  /** {@link #call(Mono, CallWeight)} weighing one request per attempt. */
  public <T> Mono<T> call(Mono<T> attempt) {
    return call(attempt, CallWeight.oneRequest());
  }

  /** A guarded call whose attempts are subscriptions of {@code attempt}, each bounded by the call timeout. */
  public <T> Mono<T> call(Mono<T> attempt, CallWeight<? super T> weight) {
    Mono<T> timed = attempt.transform(Breakwater.perCallTimeout(callTimeout));
    return Mono.from(guarded(timed, weight, hedge == null ? null : Breakwater.hedgedBy(hedge)));
  }

  private <T> Publisher<T> guarded(Publisher<T> attempt, CallWeight<? super T> weight,
      @Nullable Function<Publisher<T>, Publisher<T>> hedging) {
    Publisher<T> guarded = attempt;
    RateLimit limit = this.rateLimit;
    if (limit != null) {
      guarded = Breakwater.<T>throttledBy(limit, weight).apply(guarded);
    }
    guarded = Breakwater.<T>guardedBy(breaker).apply(guarded);
    if (hedging != null) {
      guarded = hedging.apply(guarded);
    }
    guarded = Breakwater.<T>retryWithBudget(retry).apply(guarded);
    Duration budget = this.deadline;
    return budget == null ? guarded : Breakwater.<T>withDeadline(budget).apply(guarded);
  }

  private static Throwable afterContent(Throwable error) {
    return error instanceof RetryExhaustedException exhausted
        && exhausted.reason() == RetryStopReason.ALREADY_EMITTED && exhausted.attempts().size() == 1
        && exhausted.getCause() != null ? exhausted.getCause() : error;
  }

  @Override
  public String toString() {
    return "LlmGuard{" + name + "}";
  }

  /** Configures an {@link LlmGuard}; not thread-safe; {@link #build()} validates. */
  public static final class Builder {
    private final String name;
    private @Nullable Duration deadline;
    private StreamTimeouts timeouts = StreamTimeouts.builder().firstItemFromDeadline().idleFromDeadline().build();
    private Duration callTimeout = DEFAULT_CALL_TIMEOUT;
    private @Nullable RetryPolicy retry;
    private @Nullable CircuitBreaker breaker;
    private @Nullable HedgePolicy hedge;
    private @Nullable RateLimit rateLimit;
    private Scheduler blockingCalls = Schedulers.boundedElastic();

    private Builder(String name) {
      this.name = Objects.requireNonNull(name, "name");
    }

    /** A deadline of {@code budget} for each request, from its subscription. */
    public Builder deadline(Duration budget) {
      this.deadline = Objects.requireNonNull(budget, "budget");
      return this;
    }

    /** The first-content and idle timeouts of each attempt of a stream, counted on content. */
    public Builder timeouts(StreamTimeouts timeouts) {
      this.timeouts = Objects.requireNonNull(timeouts, "timeouts");
      return this;
    }

    /** The most each attempt of a blocking call may take (default {@link #DEFAULT_CALL_TIMEOUT}). */
    public Builder callTimeout(Duration timeout) {
      this.callTimeout = Objects.requireNonNull(timeout, "timeout");
      return this;
    }

    /** The retry policy (default: {@value #DEFAULT_MAX_RETRIES} retries, full jitter, named {@code llm:name}). */
    public Builder retry(RetryPolicy retry) {
      this.retry = Objects.requireNonNull(retry, "retry");
      return this;
    }

    /** The breaker every attempt passes (default: {@code CircuitBreaker.ofDefaults("llm:" + name)}). */
    public Builder breaker(CircuitBreaker breaker) {
      this.breaker = Objects.requireNonNull(breaker, "breaker");
      return this;
    }

    /** Hedges the first content: a backup attempt when none came by the policy's delay (off by default). */
    public Builder hedge(HedgePolicy hedge) {
      this.hedge = Objects.requireNonNull(hedge, "hedge");
      return this;
    }

    /** The provider's rate limit: each attempt takes the weight the request gives (off by default). */
    public Builder rateLimit(RateLimit limit) {
      this.rateLimit = Objects.requireNonNull(limit, "limit");
      return this;
    }

    /** Where blocking attempts run (default {@code Schedulers.boundedElastic()}). */
    public Builder blockingCalls(Scheduler scheduler) {
      this.blockingCalls = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /** The guard; fails with {@link IllegalArgumentException} saying what to change. */
    public LlmGuard build() {
      if (name.isBlank()) {
        throw new IllegalArgumentException("LlmGuard name is blank: give the model's name, e.g. \"openai\"");
      }
      if (deadline != null && (deadline.isNegative() || deadline.isZero())) {
        throw new IllegalArgumentException("LlmGuard '" + name + "' deadline is " + deadline
            + ": give a positive duration");
      }
      if (callTimeout.isNegative() || callTimeout.isZero()) {
        throw new IllegalArgumentException("LlmGuard '" + name + "' callTimeout is " + callTimeout
            + ": give a positive duration");
      }
      return new LlmGuard(this);
    }
  }
}
