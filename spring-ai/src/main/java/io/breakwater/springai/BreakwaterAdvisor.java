package io.breakwater.springai;

import io.breakwater.Breakwater;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.hedge.HedgePolicy;
import io.breakwater.limit.CallWeight;
import io.breakwater.limit.RateLimit;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.retry.RetryStopReason;
import io.breakwater.stream.StreamTimeouts;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.ai.chat.client.ChatClientRequest;
import org.springframework.ai.chat.client.ChatClientResponse;
import org.springframework.ai.chat.client.advisor.api.CallAdvisor;
import org.springframework.ai.chat.client.advisor.api.CallAdvisorChain;
import org.springframework.ai.chat.client.advisor.api.StreamAdvisor;
import org.springframework.ai.chat.client.advisor.api.StreamAdvisorChain;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.metadata.Usage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.core.Ordered;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Guards every call and stream of a Spring AI {@code ChatClient} with Breakwater's operators, as one advisor:
 *
 * <pre>{@code
 * ChatClient chat = ChatClient.builder(model).defaultAdvisors(BreakwaterAdvisor.of("openai")).build();
 * }</pre>
 *
 * Each request runs, outermost first:
 *
 * <pre>
 * deadline (the advisor's budget, or the one in the subscriber's Reactor Context; nesting only tightens)
 *   → retry (retryWithBudget: before the first content only, with the retry budgets, Retry-After, no nested retries)
 *     → first-token hedge, if set (hedgedBy on the first content)
 *       → breaker (guardedBy: every attempt; an open breaker answers without a request)
 *         → rate limit, if set (throttledBy: one request and the estimated tokens of each attempt)
 *           → timeouts (a stream: first content, then no stall longer than idle; a call: perCallTimeout)
 *             → the rest of the advisor chain and the model
 * </pre>
 *
 * <ul>
 *   <li><b>Content, not framing, is progress.</b> A response with text or tool calls is content; role-only chunks,
 *       usage and empty responses are not. They are held until the attempt's first content (or its end), so a retry
 *       starts only when nothing was delivered, and they never reset the idle clock.</li>
 *   <li><b>After the first content</b> a stream is never retried: a stall ends it with an
 *       {@link io.breakwater.stream.IdleTimeoutException} after the partial answer.</li>
 *   <li><b>Errors</b> of the OpenAI and Anthropic SDKs reach the retry, breaker and rate limit as
 *       {@link io.breakwater.failure.HttpStatusException}s with the response headers (so {@code Retry-After} and the
 *       provider's rate-limit headers are read), with the SDK's exception as cause.</li>
 *   <li><b>Cancellation</b> (the caller's, a timeout's, a lost hedge's) cancels the attempt; with
 *       {@link Builder#cancellableCalls} it also closes the attempt's HTTP connection at once.</li>
 *   <li><b>Blocking calls</b> ({@code ChatClient.call()}) run the same pipeline on Reactor's bounded-elastic
 *       scheduler and wait for it on the caller's thread, as Spring AI's call API must; a Breakwater timeout then
 *       arrives as the cause of the {@code RuntimeException} that {@code Mono.block()} throws (read it with
 *       {@code reactor.core.Exceptions.unwrap}).</li>
 *   <li><b>Order.</b> By default ({@link #EACH_MODEL_ROUND}) the advisor sits inside Spring AI's tool-calling
 *       advisor: each model request of the tool loop is guarded on its own. With {@link #WHOLE_TURN} it sits around
 *       the tool loop: one deadline for the whole turn, tools included.</li>
 *   <li><b>Meters</b>: those of the operators ({@code breakwater.retry.*}, {@code breakwater.breaker.*},
 *       {@code breakwater.stream.timeouts}, {@code breakwater.hedge.*}, the rate limit's).</li>
 * </ul>
 *
 * <p>Immutable and thread-safe: build one per model and share it.
 */
public final class BreakwaterAdvisor implements CallAdvisor, StreamAdvisor {

  /** The order inside Spring AI's tool-calling advisor: each model request of the tool loop is guarded. */
  public static final int EACH_MODEL_ROUND = Ordered.LOWEST_PRECEDENCE - 100;
  /** The order around Spring AI's tool-calling advisor (and inside chat memory): one guard for the whole turn. */
  public static final int WHOLE_TURN = Ordered.HIGHEST_PRECEDENCE + 250;
  /** The default per-attempt bound of a blocking call: 2 minutes (less when the deadline leaves less). */
  public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofMinutes(2);
  /** The default retries of a request. */
  public static final int DEFAULT_MAX_RETRIES = 2;

  private final String name;
  private final int order;
  private final @Nullable Duration deadline;
  private final StreamTimeouts timeouts;
  private final Duration callTimeout;
  private final RetryPolicy retry;
  private final CircuitBreaker breaker;
  private final @Nullable HedgePolicy hedge;
  private final @Nullable RateLimit rateLimit;
  private final ToLongFunction<Prompt> tokenEstimate;
  private final @Nullable CancellableCalls calls;
  private final Scheduler blockingCalls;

  private BreakwaterAdvisor(Builder b) {
    this.name = b.name;
    this.order = b.order;
    this.deadline = b.deadline;
    this.timeouts = b.timeouts;
    this.callTimeout = b.callTimeout;
    this.retry = b.retry != null ? b.retry
        : RetryPolicy.builder().name("llm:" + b.name).maxRetries(DEFAULT_MAX_RETRIES).build();
    this.breaker = b.breaker != null ? b.breaker : CircuitBreaker.ofDefaults("llm:" + b.name);
    this.hedge = b.hedge;
    this.rateLimit = b.rateLimit;
    this.tokenEstimate = b.tokenEstimate;
    this.calls = b.calls;
    this.blockingCalls = b.blockingCalls;
  }

  /** The advisor of the model {@code name} with every default: see {@link Builder}. */
  public static BreakwaterAdvisor of(String name) {
    return builder(name).build();
  }

  /** A builder for the model {@code name}, which names its breaker, retry policy and meters ({@code llm:name}). */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  @Override
  public String getName() {
    return "breakwater:" + name;
  }

  @Override
  public int getOrder() {
    return order;
  }

  /** The breaker every attempt passes. */
  public CircuitBreaker breaker() {
    return breaker;
  }

  @Override
  public Flux<ChatClientResponse> adviseStream(ChatClientRequest request, StreamAdvisorChain chain) {
    Objects.requireNonNull(request, "request");
    Flux<ChatClientResponse> attempt = attempt(request, (tagged) -> chain.copy(this).nextStream(tagged))
        .transform(BreakwaterAdvisor::heldUntilContent)
        .transform(Breakwater.streamTimeouts(timeouts, BreakwaterAdvisor::isContent));
    return Flux.from(guard(attempt, request, hedge == null ? null
        : Breakwater.hedgedBy(hedge, BreakwaterAdvisor::isContent)))
        .onErrorMap(BreakwaterAdvisor::afterContent);
  }

  /**
   * The failure of a stream cut after its content: the cause itself (an idle timeout, a dropped connection) rather
   * than the retry's report that it could not retry a stream that had emitted.
   */
  private static Throwable afterContent(Throwable error) {
    return error instanceof RetryExhaustedException exhausted
        && exhausted.reason() == RetryStopReason.ALREADY_EMITTED && exhausted.attempts().size() == 1
        && exhausted.getCause() != null ? exhausted.getCause() : error;
  }

  @Override
  public ChatClientResponse adviseCall(ChatClientRequest request, CallAdvisorChain chain) {
    Objects.requireNonNull(request, "request");
    Flux<ChatClientResponse> attempt = attempt(request,
        tagged -> Mono.fromCallable(() -> chain.copy(this).nextCall(tagged)).subscribeOn(blockingCalls))
        .transform(Breakwater.perCallTimeout(callTimeout));
    try {
      ChatClientResponse response = Mono.from(guard(attempt, request,
          hedge == null ? null : Breakwater.hedgedBy(hedge))).block();
      if (response == null) {
        throw new IllegalStateException("The advisor chain of '" + name + "' answered nothing");
      }
      return response;
    } catch (RuntimeException e) {
      Throwable cause = Exceptions.unwrap(e);
      throw cause instanceof RuntimeException r ? r : e;
    }
  }

  /** One attempt: a fresh copy of the chain, with the attempt's HTTP call closed when it is cancelled. */
  private Flux<ChatClientResponse> attempt(ChatClientRequest request,
      Function<ChatClientRequest, Publisher<ChatClientResponse>> next) {
    CancellableCalls calls = this.calls;
    if (calls == null) {
      return Flux.defer(() -> next.apply(request)).onErrorMap(ProviderErrors::toBreakwater);
    }
    return Flux.defer(() -> {
      String id = calls.open();
      return Flux.from(next.apply(calls.tag(request, id)))
          .doOnCancel(() -> calls.cancel(id))
          .doFinally(signal -> calls.close(id));
    }).onErrorMap(ProviderErrors::toBreakwater);
  }

  private Publisher<ChatClientResponse> guard(Flux<ChatClientResponse> attempt, ChatClientRequest request,
      @Nullable Function<Publisher<ChatClientResponse>, Publisher<ChatClientResponse>> hedging) {
    Flux<ChatClientResponse> guarded = attempt;
    RateLimit limit = this.rateLimit;
    if (limit != null) {
      long estimate = Math.max(0, tokenEstimate.applyAsLong(request.prompt()));
      guarded = guarded.transform(Breakwater.throttledBy(limit,
          CallWeight.tokens(estimate, BreakwaterAdvisor::totalTokens)));
    }
    guarded = guarded.transform(Breakwater.guardedBy(breaker));
    if (hedging != null) {
      guarded = guarded.transform(hedging);
    }
    guarded = guarded.transform(Breakwater.retryWithBudget(retry));
    Duration budget = this.deadline;
    return budget == null ? guarded : guarded.transform(Breakwater.withDeadline(budget));
  }

  /**
   * Whether {@code response} carries content: text or tool calls in one of its generations. Role-only chunks, usage
   * and finish reasons alone are framing.
   */
  public static boolean isContent(ChatClientResponse response) {
    ChatResponse chat = response.chatResponse();
    if (chat == null) {
      return false;
    }
    for (Generation generation : chat.getResults()) {
      AssistantMessage message = generation.getOutput();
      String text = message.getText();
      if ((text != null && !text.isEmpty()) || message.hasToolCalls()) {
        return true;
      }
    }
    return false;
  }

  /** The total tokens a response reports, or -1 when it reports none. */
  private static long totalTokens(ChatClientResponse response) {
    ChatResponse chat = response.chatResponse();
    Usage usage = chat == null ? null : chat.getMetadata().getUsage();
    Integer total = usage == null ? null : usage.getTotalTokens();
    return total == null || total <= 0 ? -1 : total;
  }

  /** The attempt's framing before its first content, held and delivered with it (or at its end). */
  static Flux<ChatClientResponse> heldUntilContent(Flux<ChatClientResponse> attempt) {
    return Flux.defer(() -> {
      FramingBuffer held = new FramingBuffer();
      return attempt.concatMapIterable(held::pass).concatWith(Flux.defer(() -> Flux.fromIterable(held.release())));
    });
  }

  /** Configures a {@link BreakwaterAdvisor}; not thread-safe; {@link #build()} validates. */
  public static final class Builder {
    private final String name;
    private int order = EACH_MODEL_ROUND;
    private @Nullable Duration deadline;
    private StreamTimeouts timeouts = StreamTimeouts.builder().firstItemFromDeadline().idleFromDeadline().build();
    private Duration callTimeout = DEFAULT_CALL_TIMEOUT;
    private @Nullable RetryPolicy retry;
    private @Nullable CircuitBreaker breaker;
    private @Nullable HedgePolicy hedge;
    private @Nullable RateLimit rateLimit;
    private ToLongFunction<Prompt> tokenEstimate = prompt -> 0;
    private @Nullable CancellableCalls calls;
    private Scheduler blockingCalls = Schedulers.boundedElastic();

    private Builder(String name) {
      this.name = Objects.requireNonNull(name, "name");
    }

    /** The advisor's order: {@link #EACH_MODEL_ROUND} (the default), {@link #WHOLE_TURN}, or any other. */
    public Builder order(int order) {
      this.order = order;
      return this;
    }

    /**
     * A deadline of {@code budget} for each request (each turn with {@link #WHOLE_TURN}), from its subscription.
     * Without one, a stream is bounded by the deadline in its subscriber's Reactor Context, if any.
     */
    public Builder deadline(Duration budget) {
      this.deadline = Objects.requireNonNull(budget, "budget");
      return this;
    }

    /**
     * The first-token and idle timeouts of each attempt of a stream, on content (default: the per-call and idle
     * budgets of the deadline in force, 12 s and 3 s without one).
     */
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

    /**
     * The provider's rate limit: each attempt takes one request and {@code tokenEstimate} of its prompt (an upper
     * bound: prompt tokens plus max tokens), corrected by the usage the response reports; a 429's headers update it.
     */
    public Builder rateLimit(RateLimit limit, ToLongFunction<Prompt> tokenEstimate) {
      this.rateLimit = Objects.requireNonNull(limit, "limit");
      this.tokenEstimate = Objects.requireNonNull(tokenEstimate, "tokenEstimate");
      return this;
    }

    /** Closes the HTTP connection of each cancelled attempt: the model must be built with its customizer. */
    public Builder cancellableCalls(CancellableCalls calls) {
      this.calls = Objects.requireNonNull(calls, "calls");
      return this;
    }

    /** Where blocking calls run (default {@code Schedulers.boundedElastic()}). */
    public Builder blockingCalls(Scheduler scheduler) {
      this.blockingCalls = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /** The advisor; fails with {@link IllegalArgumentException} saying what to change. */
    public BreakwaterAdvisor build() {
      if (name.isBlank()) {
        throw new IllegalArgumentException("BreakwaterAdvisor name is blank: give the model's name, e.g. \"openai\"");
      }
      if (deadline != null && (deadline.isNegative() || deadline.isZero())) {
        throw new IllegalArgumentException("BreakwaterAdvisor '" + name + "' deadline is " + deadline
            + ": give a positive duration");
      }
      if (callTimeout.isNegative() || callTimeout.isZero()) {
        throw new IllegalArgumentException("BreakwaterAdvisor '" + name + "' callTimeout is " + callTimeout
            + ": give a positive duration");
      }
      return new BreakwaterAdvisor(this);
    }
  }
}
