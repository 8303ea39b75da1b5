package io.breakwater;

import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.hedge.HedgePolicy;
import io.breakwater.internal.hedge.HedgeOperator;
import io.breakwater.internal.deadline.DeadlineOperator;
import io.breakwater.internal.idempotency.IdempotentOperator;
import com.fasterxml.jackson.core.type.TypeReference;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyKeyMismatchException;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.limit.LimitOperator;
import io.breakwater.internal.limit.ThrottleOperator;
import io.breakwater.limit.CallWeight;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.RateLimit;
import io.breakwater.internal.retry.RetryOperator;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.retry.StreamResume;
import io.breakwater.retry.TaskRetryBudget;
import io.breakwater.internal.stream.StreamTimeoutOperator;
import io.breakwater.stream.FirstItemTimeoutException;
import io.breakwater.stream.IdleTimeoutException;
import io.breakwater.stream.StreamTimeouts;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * The one entry point to Breakwater's operators. Each is a plain function for {@code transformDeferred} (or
 * {@code transform}) that works on both {@code Mono} and {@code Flux}; a {@code Mono} stays a {@code Mono}. The
 * functions hold no per-call state: everything a call needs is created when it is subscribed, so one operator can be
 * stored and shared.
 *
 * <pre>{@code
 * import static io.breakwater.Breakwater.*;
 *
 * Mono<Flights> flights = client.searchFlights(query)
 *     .transformDeferred(withDeadline(Duration.ofSeconds(10)));
 * }</pre>
 *
 * <h2>Composition order</h2>
 * Operators apply to what is upstream of them, so the one written last is the outermost. Put the deadline outermost:
 * every inner operator reads it from the Reactor Context and bounds its own waits by it.
 */
public final class Breakwater {

  private Breakwater() {}

  /**
   * Bounds everything upstream by a deadline {@code budget} from subscription, with every other setting of
   * {@link DeadlineSpec} at its default.
   *
   * @see #withDeadline(DeadlineSpec)
   */
  public static <T> Function<Publisher<T>, Publisher<T>> withDeadline(Duration budget) {
    return withDeadline(DeadlineSpec.of(budget));
  }

  /**
   * Bounds everything upstream by a deadline: an absolute {@link Deadline}, {@code spec.budget()} from subscription,
   * written into the Reactor Context so that every inner operator and user code can read it.
   *
   * <ul>
   *   <li><b>Nesting only tightens.</b> If a deadline earlier than this one is already in force, it stays in force
   *       (and this operator adds nothing); otherwise this one replaces it for everything upstream.</li>
   *   <li><b>Expiry.</b> When the deadline passes, upstream is cancelled and the subscriber gets a
   *       {@link DeadlineExceededException} (a {@link java.util.concurrent.TimeoutException}) that names the budget
   *       and says how much of it was used. Items a {@code Flux} emitted before are kept.</li>
   *   <li><b>Already expired.</b> A zero budget, or a deadline already past at subscription, fails at once
   *       without subscribing upstream: no call is made.</li>
   *   <li><b>Time</b> comes from {@code spec.scheduler()}, resolved at subscription.</li>
   * </ul>
   */
  public static <T> Function<Publisher<T>, Publisher<T>> withDeadline(DeadlineSpec spec) {
    return DeadlineOperator.task(spec);
  }

  /**
   * Bounds each call (each subscription, so each retry attempt) by the per-call budget of the deadline in force:
   * min(remaining × 0.6, 12 s) with the default {@link DeadlineSpec}; 12 s when no deadline is in force. The budget
   * also tightens the deadline that upstream sees, so an HTTP call sends the call's remaining time, not the task's.
   * A call that outlives it is cancelled with a retryable {@link CallTimeoutException}.
   *
   * <p>Put it inside (upstream of) {@code retryWithBudget} so that every attempt gets its own budget.
   */
  public static <T> Function<Publisher<T>, Publisher<T>> perCallTimeout() {
    return DeadlineOperator.perCall(DeadlineSpec.DEFAULT_PER_CALL_CAP);
  }

  /**
   * Bounds each call by min({@code max}, the per-call budget of the deadline in force); {@code max} when no deadline
   * is in force.
   *
   * @see #perCallTimeout()
   */
  public static <T> Function<Publisher<T>, Publisher<T>> perCallTimeout(Duration max) {
    if (max.isNegative() || max.isZero()) {
      throw new IllegalArgumentException("perCallTimeout max is " + max + ": give a positive duration");
    }
    return DeadlineOperator.perCall(max);
  }

  /**
   * Declares what everything upstream does to the world, in the Reactor Context, so that a {@code retryWithBudget}
   * upstream refuses to retry a {@link SideEffect#NON_IDEMPOTENT_WRITE} that is not inside {@code idempotentBy}.
   * Put it outermost, around the retry and the idempotency operators.
   */
  public static <T> Function<Publisher<T>, Publisher<T>> sideEffect(SideEffect sideEffect) {
    Objects.requireNonNull(sideEffect, "sideEffect");
    return source -> source instanceof Mono<T> mono
        ? mono.contextWrite(Context.of(ContextKeys.SIDE_EFFECT, sideEffect))
        : Flux.from(source).contextWrite(Context.of(ContextKeys.SIDE_EFFECT, sideEffect));
  }

  /**
   * Makes the call happen at most once per key: the first subscriber claims the key and runs it, the outcome is kept
   * (24 h by default) and replayed to every later subscriber with the same key; duplicates that arrive while it runs
   * wait for its outcome within their own deadline. Uses the default {@link IdempotencyPolicy} with {@code store}.
   *
   * <ul>
   *   <li>A key used with a different payload fails with {@link IdempotencyKeyMismatchException}; nothing runs.</li>
   *   <li>A retryable failure frees the key, so a later retry runs; a non-retryable one too, unless the policy keeps
   *       it.</li>
   *   <li>The claim's lease (30 s by default) is renewed while the owner runs: an owner that crashed frees the key
   *       within one lease, and its late completion is fenced off by its owner token. The owner's side effect reads
   *       its claim with {@link io.breakwater.idempotency.IdempotencyContext#current}.</li>
   *   <li>The caller gets the result at once; it is stored in the background, retried until stored or the lease
   *       ends. Cancelling the owner before a result frees the key; after a result, nothing is released.</li>
   *   <li>A hit touches nothing upstream: no breaker, timeout or retry.</li>
   *   <li>Upstream runs with the key in its Context, so a {@code retryWithBudget} inside may retry a
   *       {@link SideEffect#NON_IDEMPOTENT_WRITE}.</li>
   * </ul>
   *
   * <p>Put it outside the retry: {@code call → retryWithBudget → idempotentBy → withDeadline}.
   */
  public static <T> Function<Mono<T>, Mono<T>> idempotentBy(IdempotencyKey key, IdempotencyStore store,
      Class<T> resultType) {
    return idempotentBy(key, IdempotencyPolicy.of(store), resultType);
  }

  /** {@link #idempotentBy(IdempotencyKey, IdempotencyStore, Class)} for a generic result type. */
  public static <T> Function<Mono<T>, Mono<T>> idempotentBy(IdempotencyKey key, IdempotencyStore store,
      TypeReference<T> resultType) {
    return idempotentBy(key, IdempotencyPolicy.of(store), resultType);
  }

  /** {@link #idempotentBy(IdempotencyKey, IdempotencyStore, Class)} with a policy of your own. */
  public static <T> Function<Mono<T>, Mono<T>> idempotentBy(IdempotencyKey key, IdempotencyPolicy policy,
      Class<T> resultType) {
    return new IdempotentOperator<>(key, policy, policy.objectMapper().constructType(resultType));
  }

  /** {@link #idempotentBy(IdempotencyKey, IdempotencyStore, Class)} with a policy of your own, generic type. */
  public static <T> Function<Mono<T>, Mono<T>> idempotentBy(IdempotencyKey key, IdempotencyPolicy policy,
      TypeReference<T> resultType) {
    return new IdempotentOperator<>(key, policy, policy.objectMapper().constructType(resultType));
  }

  /**
   * Retries failed calls with {@code backoff} and every other setting of {@link RetryPolicy} at its default (at most
   * 3 retries), on the budget of the dependency {@code "default"}: every unnamed {@code retryWithBudget} of the
   * process shares it, however often it is built. Name the dependency with
   * {@link #retryWithBudget(String, Backoff)} to give it a budget of its own.
   *
   * @see #retryWithBudget(RetryPolicy)
   */
  public static <T> Function<Publisher<T>, Publisher<T>> retryWithBudget(Backoff backoff) {
    return retryWithBudget(RetryPolicy.of(RetryPolicy.DEFAULT_NAME, backoff));
  }

  /**
   * Retries failed calls to {@code dependency} with {@code backoff} and every other setting of {@link RetryPolicy}
   * at its default, on that dependency's retry budget: written inline, in the method that makes each call, every
   * call to {@code "flights"} draws on one budget.
   *
   * <pre>{@code
   * return flights.search(query)
   *     .transformDeferred(retryWithBudget("flights", Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(2))));
   * }</pre>
   *
   * @param dependency the dependency's name, fixed (a service or a tool), never request data: a metric tag
   */
  public static <T> Function<Publisher<T>, Publisher<T>> retryWithBudget(String dependency, Backoff backoff) {
    return retryWithBudget(RetryPolicy.of(dependency, backoff));
  }

  /**
   * Retries failed calls, classified by the policy's {@code FailureClassifier}, within every budget in force:
   *
   * <pre>{@code
   * Mono<Offers> offers = flights.search(query)
   *     .transformDeferred(perCallTimeout())
   *     .transformDeferred(retryWithBudget(RetryPolicy.builder().name("flights").build()))
   *     .transformDeferred(withDeadline(Duration.ofSeconds(20)));
   * }</pre>
   *
   * <ul>
   *   <li><b>Classified.</b> Retryable kinds (timeouts, connection errors, 408, 429, 5xx) are retried; a first
   *       failure that is not retryable reaches the subscriber unchanged, after exactly one attempt; an unknown
   *       kind is retried once. A server's {@code Retry-After} or {@code retry-after-ms} is the wait (even a short
   *       one, up to 60 s); a rate limit without one waits at least 5 s; {@code x-should-retry: false} forbids a
   *       retry.</li>
   *   <li><b>Budgeted.</b> The policy's {@code maxRetries}, the task's {@link #withRetryBudget(int)} and the
   *       dependency's {@link io.breakwater.retry.RetryBudget} must all allow a retry.</li>
   *   <li><b>Deadline-aware.</b> No sleep passes the deadline in force, and no attempt starts with less than the
   *       policy's {@code minAttemptTime} left: the subscriber gets the last real error at once instead.</li>
   *   <li><b>Never multiplies.</b> When it gives up it signals {@link RetryExhaustedException} (with every attempt
   *       and the reason), which outer {@code retryWithBudget} operators pass through without retrying.</li>
   *   <li><b>Streams.</b> A {@code Flux} is retried only while it has emitted nothing; see
   *       {@link #retryWithBudget(RetryPolicy, StreamResume)} to resume one.</li>
   *   <li><b>Side effects.</b> A call declared {@code NON_IDEMPOTENT_WRITE} outside {@code idempotentBy} fails at
   *       subscription with {@link io.breakwater.retry.UnsafeRetryException}; no call is made.</li>
   *   <li><b>Time</b> comes from the deadline's scheduler when one is in force, else from the policy's, resolved at
   *       subscription. Cancellation during a backoff disposes its timer.</li>
   * </ul>
   *
   * On a {@code Mono} the success path allocates one small subscriber and no timer.
   */
  public static <T> Function<Publisher<T>, Publisher<T>> retryWithBudget(RetryPolicy policy) {
    return new RetryOperator<>(Objects.requireNonNull(policy, "policy"), null);
  }

  /**
   * Like {@link #retryWithBudget(RetryPolicy)}, and a {@code Flux} that already emitted items is retried too: it is
   * subscribed again with the last delivered position in its Context ({@link StreamResume#lastDelivered}), and
   * items already delivered are dropped.
   */
  public static <T> Function<Publisher<T>, Publisher<T>> retryWithBudget(RetryPolicy policy, StreamResume<T> resume) {
    return new RetryOperator<>(Objects.requireNonNull(policy, "policy"), Objects.requireNonNull(resume, "resume"));
  }

  /**
   * Allows at most {@code retries} retries for everything upstream together (e.g. one agent task), shared by every
   * {@code retryWithBudget} inside it. Nested budgets only tighten: a retry takes from each budget in force. The
   * count starts at each subscription.
   *
   * <pre>{@code
   * task.transformDeferred(withRetryBudget(5));
   * }</pre>
   */
  public static <T> Function<Publisher<T>, Publisher<T>> withRetryBudget(int retries) {
    if (retries < 0) {
      throw new IllegalArgumentException("withRetryBudget(" + retries + "): give zero or more retries");
    }
    Function<Context, Context> budget = ctx -> ctx.put(ContextKeys.TASK_RETRY_BUDGET,
        new TaskRetryBudget(retries, ctx.getOrDefault(ContextKeys.TASK_RETRY_BUDGET, null)));
    return source -> source instanceof Mono<T> mono
        ? mono.contextWrite(budget)
        : Flux.from(source).contextWrite(budget);
  }

  /**
   * Guards everything upstream with a circuit breaker: each subscription (so each retry attempt) asks the breaker
   * for admission and reports its outcome. A rejected call fails at once with
   * {@link io.breakwater.breaker.CircuitBreakerOpenException} ({@code CIRCUIT_OPEN}, not retryable), and upstream is
   * never subscribed.
   *
   * <pre>{@code
   * CircuitBreaker breaker = CircuitBreaker.ofDefaults("weather");
   * client.forecast(city)
   *     .transformDeferred(perCallTimeout())
   *     .transformDeferred(guardedBy(breaker))          // every attempt passes the breaker
   *     .transformDeferred(retryWithBudget(policy));
   * }</pre>
   *
   * <ul>
   *   <li><b>Happy path:</b> a volatile read to admit, a striped increment to record, no lock, no store round
   *       trip; the clock is read once per asynchronous call (twice to time a slow call), and only on a sample of
   *       dense synchronous ones.</li>
   *   <li><b>What counts:</b> timeouts, 5xx and connection failures; not 4xx, invalid arguments, the task's own
   *       deadline or cancellation (see {@link io.breakwater.breaker.CircuitBreaker}).</li>
   *   <li><b>{@code Flux}:</b> judged by its errors and its time to first element, not its total duration.</li>
   * </ul>
   */
  public static <T> Function<Publisher<T>, Publisher<T>> guardedBy(io.breakwater.breaker.CircuitBreaker breaker) {
    Objects.requireNonNull(breaker, "breaker");
    return io.breakwater.internal.breaker.GuardOperator.of(breaker);
  }

  /**
   * Guards everything upstream with the breakers of {@code toolName} in {@code registry}: its family's breaker
   * first (an open family rejects with the family's name), then its own. Both record every call that reaches them.
   *
   * <pre>{@code
   * gmail.send(draft).transformDeferred(guardedBy(breakers, "gmail.send"));   // family "gmail", tool "gmail.send"
   * }</pre>
   *
   * @see #guardedBy(io.breakwater.breaker.CircuitBreaker)
   */
  public static <T> Function<Publisher<T>, Publisher<T>> guardedBy(
      io.breakwater.breaker.CircuitBreakerRegistry registry, String toolName) {
    Objects.requireNonNull(registry, "registry");
    return registry.guard(toolName);
  }

  /**
   * Lets at most {@code limit.limit()} calls run upstream at once: each subscription holds a permit until it
   * terminates or is cancelled (a {@code Flux} for its whole life), and gives it back exactly once.
   *
   * <pre>{@code
   * ConcurrencyLimit search = ConcurrencyLimit.builder("search").fixed(10).build();
   * client.search(query)
   *     .transformDeferred(limitedBy(search))
   *     .transformDeferred(withDeadline(Duration.ofSeconds(5)));
   * }</pre>
   *
   * <ul>
   *   <li><b>No permit free:</b> the call waits in a FIFO queue, at most the limit's {@code maxWait} and never past
   *       the deadline in force, then runs; or it is refused with a {@link LimitExceededException}
   *       ({@code LIMIT_EXCEEDED}, not retryable) without subscribing upstream: when the queue is full, when it may
   *       not wait, or when its wait runs out.</li>
   *   <li><b>Cancellation</b> of a waiting call takes it out of the queue; of a running one gives its permit to the
   *       next waiting call. Neither is a failure.</li>
   *   <li><b>Adaptive limits</b> learn from each call's latency and drops (see {@link ConcurrencyLimit.Builder#adaptive(int,
   *       int, int)}); a cancelled call teaches nothing.</li>
   *   <li><b>Happy path:</b> one compare-and-set to take a permit, one to give it back; no clock read for a fixed
   *       limit.</li>
   * </ul>
   *
   * <p>Put it inside (upstream of) {@code retryWithBudget}, so that a call does not hold a permit while it backs
   * off, and outside {@code perCallTimeout}, so that waiting for a permit does not count against the call.
   */
  public static <T> Function<Publisher<T>, Publisher<T>> limitedBy(ConcurrencyLimit limit) {
    return LimitOperator.of(limit);
  }

  /**
   * Takes one request of {@code limit} for each call (each subscription, so each retry attempt), without tokens.
   *
   * @see #throttledBy(RateLimit, CallWeight)
   */
  public static <T> Function<Publisher<T>, Publisher<T>> throttledBy(RateLimit limit) {
    return ThrottleOperator.of(limit, CallWeight.oneRequest());
  }

  /**
   * Takes one request and the estimated tokens of {@code weight} from {@code limit} for each call (each subscription,
   * so each retry attempt), and corrects the tokens by the call's actual usage when it ends:
   *
   * <pre>{@code
   * llm.complete(prompt)
   *     .transformDeferred(throttledBy(openai, CallWeight.tokens(promptTokens + maxTokens, Reply::totalTokens)))
   *     .transformDeferred(withDeadline(Duration.ofSeconds(30)));
   * }</pre>
   *
   * <ul>
   *   <li><b>Permits there:</b> the call runs at once. Otherwise it waits in the limit's fair queue until its turn.
   *       A call whose turn would come only after its deadline or the limit's {@code maxWait} is refused at once with
   *       a {@link LimitExceededException} saying when it could run, instead of waiting and timing out.</li>
   *   <li><b>Learning.</b> The provider's rate-limit headers, in an {@link io.breakwater.failure.HttpStatusException}
   *       or read from the result by {@code weight}, update the limit (see {@link RateLimit}). A 429 stops every call
   *       until its {@code retry-after}.</li>
   *   <li><b>Settling.</b> A call refused further in by Breakwater (an open breaker, another limit) gives its permits
   *       back; a call that failed or was cancelled after it was sent keeps them, as the provider may have counted
   *       it.</li>
   *   <li><b>Happy path:</b> one short lock to take the permits and one clock read; none more when the call ends
   *       unless its usage corrects the estimate.</li>
   * </ul>
   *
   * <p>Put it inside {@code retryWithBudget} (each attempt is a request) and outside {@code limitedBy} (a call does
   * not hold a concurrency permit while it waits for tokens).
   */
  public static <T> Function<Publisher<T>, Publisher<T>> throttledBy(RateLimit limit, CallWeight<? super T> weight) {
    return ThrottleOperator.of(limit, weight);
  }

  /**
   * Runs everything upstream as one agent task under {@code budget}: its deadline (a {@link #withDeadline}), its
   * retries (a {@link #withRetryBudget}), and its steps, tokens and per-tool state, created at subscription and
   * carried in the Context for every {@link io.breakwater.agent.Tool} called inside.
   *
   * <pre>{@code
   * TaskBudget budget = TaskBudget.builder(Duration.ofSeconds(30)).retries(5).maxSteps(20).tokens(50_000).build();
   * agent.answer(question).transformDeferred(withTaskBudget(budget));
   * }</pre>
   *
   * <p>Nested task budgets only tighten: an inner task draws on the outer one's steps, tokens and retries, and its
   * deadline is the earlier of the two. Read what is left with {@link io.breakwater.agent.TaskBudget#remaining}.
   */
  public static <T> Function<Publisher<T>, Publisher<T>> withTaskBudget(io.breakwater.agent.TaskBudget budget) {
    Objects.requireNonNull(budget, "budget");
    Function<Context, Context> state = ctx -> ctx.put(ContextKeys.TASK_STATE,
        new io.breakwater.internal.agent.TaskState(budget, ctx.getOrDefault(ContextKeys.TASK_STATE, null)));
    Function<Publisher<T>, Publisher<T>> retries = budget.retries() == io.breakwater.agent.TaskBudget.UNLIMITED
        ? Function.identity()
        : withRetryBudget(budget.retries());
    Function<Publisher<T>, Publisher<T>> deadline = withDeadline(budget.deadline());
    return source -> {
      Publisher<T> withState = source instanceof Mono<T> mono
          ? mono.contextWrite(state)
          : Flux.from(source).contextWrite(state);
      return deadline.apply(retries.apply(withState));
    };
  }

  /**
   * Fails a stream that makes no progress for the idle budget of the deadline in force (min(per-call × 0.3, 3 s)
   * by default), read at subscription; 3 s without a deadline. Every item counts as progress.
   *
   * @see #idleTimeout(Duration, Predicate)
   */
  public static <T> Function<Publisher<T>, Publisher<T>> idleTimeout() {
    return new StreamTimeoutOperator<>(StreamTimeouts.builder().idleFromDeadline().build(), null);
  }

  /**
   * Fails a stream that goes {@code timeout} without an item, counted from subscription and then from each item,
   * with an {@link IdleTimeoutException}; upstream is cancelled.
   *
   * @see #idleTimeout(Duration, Predicate)
   */
  public static <T> Function<Publisher<T>, Publisher<T>> idleTimeout(Duration timeout) {
    return new StreamTimeoutOperator<>(StreamTimeouts.builder().idle(timeout).build(), null);
  }

  /**
   * Fails a stream that goes {@code timeout} without a <em>progress</em> item, counted from subscription and then
   * from each progress item, with an {@link IdleTimeoutException} (a {@link java.util.concurrent.TimeoutException}
   * of kind {@code TIMEOUT}, giving the timeout and the time since progress); upstream is cancelled. Items for
   * which {@code isProgress} is false (heartbeats) are delivered but do not reset the clock:
   *
   * <pre>{@code
   * ServerSentEvents.builder().comments(true).build().events(bytes)
   *     .transformDeferred(idleTimeout(Duration.ofSeconds(3), e -> !e.isHeartbeat()));
   * }</pre>
   *
   * <p>Exact: the error comes at last progress + {@code timeout}, to the nanosecond in virtual time. One timer per
   * subscription, re-armed for the remainder when it finds recent progress; each progress item reads the clock once
   * and allocates nothing ({@link StreamTimeouts.Builder#coarse()} trades that clock read for a stall detected up to
   * a quarter of the timeout late). Time comes from the deadline's scheduler if one is in force, else
   * {@code Schedulers.parallel()}, resolved at subscription. See {@link StreamTimeouts} for first-item timeouts and
   * explicit schedulers.
   */
  public static <T> Function<Publisher<T>, Publisher<T>> idleTimeout(Duration timeout,
      Predicate<? super T> isProgress) {
    return new StreamTimeoutOperator<>(StreamTimeouts.builder().idle(timeout).build(),
        Objects.requireNonNull(isProgress, "isProgress"));
  }

  /**
   * Fails a stream whose first item does not come within the per-call budget of the deadline in force (12 s without
   * one), read at subscription.
   *
   * @see #firstItemTimeout(Duration)
   */
  public static <T> Function<Publisher<T>, Publisher<T>> firstItemTimeout() {
    return new StreamTimeoutOperator<>(StreamTimeouts.builder().firstItemFromDeadline().build(), null);
  }

  /**
   * Fails a stream whose first item does not come within {@code timeout} of subscription with a
   * {@link FirstItemTimeoutException}; upstream is cancelled. Once the first item came, the stream is not watched.
   *
   * <pre>{@code
   * llm.stream(prompt).transformDeferred(firstItemTimeout(Duration.ofSeconds(20)));
   * }</pre>
   */
  public static <T> Function<Publisher<T>, Publisher<T>> firstItemTimeout(Duration timeout) {
    return new StreamTimeoutOperator<>(StreamTimeouts.builder().firstItem(timeout).build(), null);
  }

  /**
   * Applies a first-item and an idle timeout with one timer: the idle clock starts at the first item (so a slow first
   * token is judged by the first-item timeout only). Every item counts as progress.
   *
   * @see StreamTimeouts
   */
  public static <T> Function<Publisher<T>, Publisher<T>> streamTimeouts(StreamTimeouts timeouts) {
    return new StreamTimeoutOperator<>(Objects.requireNonNull(timeouts, "timeouts"), null);
  }

  /**
   * Applies a first-item and an idle timeout with one timer, counting only items for which {@code isProgress} is
   * true (heartbeats are delivered but do not count):
   *
   * <pre>{@code
   * events.transformDeferred(streamTimeouts(
   *     StreamTimeouts.builder().firstItem(Duration.ofSeconds(30)).idle(Duration.ofSeconds(3)).build(),
   *     (ServerSentEvent e) -> !e.isHeartbeat()));
   * }</pre>
   */
  public static <T> Function<Publisher<T>, Publisher<T>> streamTimeouts(StreamTimeouts timeouts,
      Predicate<? super T> isProgress) {
    return new StreamTimeoutOperator<>(Objects.requireNonNull(timeouts, "timeouts"),
        Objects.requireNonNull(isProgress, "isProgress"));
  }

  /**
   * Sends a backup attempt when a call has not answered within the policy's delay, and keeps the first answer:
   *
   * <pre>{@code
   * HedgePolicy search = HedgePolicy.builder().name("search").build();   // p95 of recent latency, 1 hedge, 10 %
   * Mono<Results> results = client.search(query)
   *     .transformDeferred(perCallTimeout())
   *     .transformDeferred(hedgedBy(search))                   // inside the retry: a hedge is not a retry
   *     .transformDeferred(retryWithBudget(policy))
   *     .transformDeferred(withDeadline(Duration.ofSeconds(10)));
   * }</pre>
   *
   * <ul>
   *   <li><b>Hedges.</b> If no attempt has answered {@code delay} after subscription, the source is subscribed
   *       again (hedge 1), and so on every {@code delay} up to {@code maxHedges}. The delay is the policy's fixed one
   *       or a percentile of recent answers (no hedging until 20 are known); under a deadline it is at most the time
   *       left / (maxHedges + 1), so every hedge still gets as long as the gap before it.</li>
   *   <li><b>First answer wins.</b> The first attempt to emit a value (or to complete) is the call's answer; the
   *       timer is disposed and the other attempts are cancelled at once, which closes their connections.</li>
   *   <li><b>Failures.</b> A failed attempt does not end the call while another is in flight. When the last one in
   *       flight fails, the call fails with its error at once: no hedge is started on a failure (that is a retry's
   *       job). A {@code retryWithBudget} outside therefore sees one failure and makes one retry, which is hedged
   *       again; hedges never spend retry budgets.</li>
   *   <li><b>Budget.</b> Every call adds {@code budget} of a token to the policy's bucket and every hedge takes
   *       one, so hedges stay under that share of calls (10 % by default); with an empty bucket, the call goes on
   *       without hedges. Under overload, hedging switches itself off instead of doubling the load.</li>
   *   <li><b>Side effects.</b> A call declared {@code NON_IDEMPOTENT_WRITE} outside {@code idempotentBy} fails at
   *       subscription with {@link io.breakwater.hedge.UnsafeHedgeException}; no call is made.</li>
   *   <li><b>Nesting.</b> A {@code hedgedBy} inside an attempt of another hedges nothing: attempts never
   *       multiply.</li>
   *   <li><b>Streams.</b> On a {@code Flux} every item counts as the answer; see
   *       {@link #hedgedBy(HedgePolicy, Predicate)} to hedge on the first content item only.</li>
   *   <li><b>Time</b> comes from the deadline's scheduler when one is in force, else from the policy's, resolved at
   *       subscription. One timer per call, none when the call answers during its subscription.</li>
   * </ul>
   *
   * Meters {@code breakwater.hedge.started}, {@code .won}, {@code .cancelled} and {@code .budget.refusals}
   * (tag {@code dependency}), and one JSON event per hedged call; see {@link HedgePolicy}.
   */
  public static <T> Function<Publisher<T>, Publisher<T>> hedgedBy(HedgePolicy policy) {
    return HedgeOperator.of(policy, null, List.of());
  }

  /**
   * First-token hedging of a stream: if no <em>content</em> item ({@code isContent} true) has arrived by the delay,
   * a second stream is opened; the first stream to deliver content wins and the others are cancelled. Items before
   * the first content item (framing, heartbeats; at most 256) are held per stream and only the winner's are
   * delivered, before its content. After the first content item there is no more hedging, however the stream goes
   * on. The delay of an adaptive policy is then a percentile of the time to first content.
   *
   * <pre>{@code
   * Flux<Event> answer = model.stream(request)
   *     .transformDeferred(hedgedBy(firstToken, event -> event.isContent()));   // not framing or heartbeats
   * }</pre>
   *
   * <p>On a {@code Mono} the predicate is ignored: its value is its answer. Everything else is as for
   * {@link #hedgedBy(HedgePolicy)}.
   */
  public static <T> Function<Publisher<T>, Publisher<T>> hedgedBy(HedgePolicy policy, Predicate<? super T> isContent) {
    return HedgeOperator.of(policy, Objects.requireNonNull(isContent, "isContent"), List.of());
  }

  /**
   * Like {@link #hedgedBy(HedgePolicy)}, with hedges sent to alternate targets (another region, another provider):
   * hedge k subscribes to {@code alternates.get((k - 1) % alternates.size()).get()}, the primary to the source.
   *
   * <pre>{@code
   * Mono<Quote> quote = usEast.quote(order)
   *     .transformDeferred(hedgedBy(quotes, List.of(() -> euWest.quote(order))));
   * }</pre>
   *
   * A supplier that throws or returns {@code null} counts as a failed attempt.
   */
  public static <T> Function<Publisher<T>, Publisher<T>> hedgedBy(HedgePolicy policy,
      List<? extends Supplier<? extends Publisher<T>>> alternates) {
    return HedgeOperator.of(policy, null, alternates);
  }

  /** First-token hedging ({@link #hedgedBy(HedgePolicy, Predicate)}) with alternate targets. */
  public static <T> Function<Publisher<T>, Publisher<T>> hedgedBy(HedgePolicy policy, Predicate<? super T> isContent,
      List<? extends Supplier<? extends Publisher<T>>> alternates) {
    return HedgeOperator.of(policy, Objects.requireNonNull(isContent, "isContent"), alternates);
  }
}
