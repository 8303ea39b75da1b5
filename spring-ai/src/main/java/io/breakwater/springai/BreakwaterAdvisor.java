package io.breakwater.springai;

import io.breakwater.internal.BlockingCall;
import io.breakwater.limit.CallWeight;
import io.breakwater.stream.llm.LlmGuard;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
import org.springframework.ai.chat.metadata.EmptyRateLimit;
import org.springframework.ai.chat.metadata.RateLimit;
import org.springframework.ai.chat.metadata.Usage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.core.Ordered;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Guards every call and stream of a Spring AI {@code ChatClient} with Breakwater's operators, as one advisor:
 *
 * <pre>{@code
 * ChatClient chat = ChatClient.builder(model).defaultAdvisors(BreakwaterAdvisor.of("openai")).build();
 * }</pre>
 *
 * Each request runs under the advisor's {@link LlmGuard} (deadline, retry before the first content, first-token
 * hedge, breaker, rate limit, timeouts on content), around the rest of the advisor chain and the model:
 *
 * <pre>{@code
 * BreakwaterAdvisor advisor = BreakwaterAdvisor.builder(LlmGuard.builder("openai")
 *         .deadline(Duration.ofSeconds(60)).build())
 *     .cancellableCalls(calls)
 *     .build();
 * }</pre>
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
 *   <li><b>Provider rate limits.</b> With a rate limit in the guard, each attempt takes a request and the
 *       {@link Builder#tokenEstimate estimated} tokens; the usage a response reports corrects the estimate, and the
 *       rate limits its metadata reports (Spring AI's Anthropic model reads them from every response's headers) lower
 *       what the limit holds, as the provider's headers on a 429 do.</li>
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
  /** The longest reset passed on: the provider-header readers cut longer ones to it. */
  private static final Duration MAX_RESET = Duration.ofHours(1);
  private final LlmGuard guard;
  private final int order;
  private final ToLongFunction<Prompt> tokenEstimate;
  private final @Nullable CancellableCalls calls;

  private BreakwaterAdvisor(Builder b) {
    this.guard = b.guard;
    this.order = b.order;
    this.tokenEstimate = b.tokenEstimate;
    this.calls = b.calls;
  }

  /** The advisor of the model {@code name} with every default ({@link LlmGuard#of}). */
  public static BreakwaterAdvisor of(String name) {
    return builder(LlmGuard.of(name)).build();
  }

  /** A builder for an advisor that guards each request with {@code guard}. */
  public static Builder builder(LlmGuard guard) {
    return new Builder(guard);
  }

  @Override
  public String getName() {
    return "breakwater:" + guard.name();
  }

  @Override
  public int getOrder() {
    return order;
  }

  /** The guard of each request. */
  public LlmGuard guard() {
    return guard;
  }

  @Override
  public Flux<ChatClientResponse> adviseStream(ChatClientRequest request, StreamAdvisorChain chain) {
    Objects.requireNonNull(request, "request");
    return guard.stream(attempt(request, tagged -> chain.copy(this).nextStream(tagged)),
        BreakwaterAdvisor::isContent, weight(request));
  }

  @Override
  public ChatClientResponse adviseCall(ChatClientRequest request, CallAdvisorChain chain) {
    Objects.requireNonNull(request, "request");
    Mono<ChatClientResponse> attempt = Mono.from(attempt(request,
        tagged -> BlockingCall.on(guard.blockingCalls(), () -> chain.copy(this).nextCall(tagged))));
    try {
      ChatClientResponse response = guard.call(attempt, weight(request)).block();
      if (response == null) {
        throw new IllegalStateException("The advisor chain of '" + guard.name() + "' answered nothing");
      }
      return response;
    } catch (RuntimeException e) {
      Throwable cause = Exceptions.unwrap(e);
      throw cause instanceof RuntimeException r ? r : e;
    }
  }

  /**
   * One request and the estimated tokens of the prompt, corrected by the usage the response reports; the rate limits
   * the response's metadata reports teach the guard's rate limit.
   */
  private CallWeight<ChatClientResponse> weight(ChatClientRequest request) {
    return CallWeight.<ChatClientResponse>tokens(Math.max(0, tokenEstimate.applyAsLong(request.prompt())),
        BreakwaterAdvisor::totalTokens).headers(BreakwaterAdvisor::rateLimitHeaders);
  }

  /**
   * The rate limits a response's metadata reports (Spring AI reads them from the provider's headers: its Anthropic
   * model does), as the provider headers a {@code ProviderRateLimits} reader reads, in both OpenAI's and Anthropic's
   * names; {@code null} when the response reports none.
   */
  static @Nullable Map<String, List<String>> rateLimitHeaders(ChatClientResponse response) {
    ChatResponse chat = response.chatResponse();
    RateLimit limit = chat == null ? null : chat.getMetadata().getRateLimit();
    if (limit == null || limit instanceof EmptyRateLimit) {
      return null;
    }
    Map<String, List<String>> headers = new HashMap<>();
    quota(headers, "requests", limit.getRequestsLimit(), limit.getRequestsRemaining(), limit.getRequestsReset());
    quota(headers, "tokens", limit.getTokensLimit(), limit.getTokensRemaining(), limit.getTokensReset());
    return headers.isEmpty() ? null : headers;
  }

  private static void quota(Map<String, List<String>> headers, String kind, @Nullable Long limit,
      @Nullable Long remaining, @Nullable Duration reset) {
    if (limit != null && limit > 0) {
      headers.put("x-ratelimit-limit-" + kind, List.of(limit.toString()));
      headers.put("anthropic-ratelimit-" + kind + "-limit", List.of(limit.toString()));
    }
    if (remaining != null && remaining >= 0 && (limit == null || limit > 0)) {
      headers.put("x-ratelimit-remaining-" + kind, List.of(remaining.toString()));
      headers.put("anthropic-ratelimit-" + kind + "-remaining", List.of(remaining.toString()));
    }
    if (reset != null && !reset.isNegative() && headers.containsKey("x-ratelimit-remaining-" + kind)) {
      // the readers take no reset beyond an hour; capping first keeps toMillis() from overflowing
      String millis = reset.compareTo(MAX_RESET) > 0 ? MAX_RESET.toMillis() + "ms" : reset.toMillis() + "ms";
      headers.put("x-ratelimit-reset-" + kind, List.of(millis));
      headers.put("anthropic-ratelimit-" + kind + "-reset", List.of(millis));
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

  /** Configures a {@link BreakwaterAdvisor}; not thread-safe. */
  public static final class Builder {
    private final LlmGuard guard;
    private int order = EACH_MODEL_ROUND;
    private ToLongFunction<Prompt> tokenEstimate = prompt -> 0;
    private @Nullable CancellableCalls calls;

    private Builder(LlmGuard guard) {
      this.guard = Objects.requireNonNull(guard, "guard");
    }

    /** The advisor's order: {@link #EACH_MODEL_ROUND} (the default), {@link #WHOLE_TURN}, or any other. */
    public Builder order(int order) {
      this.order = order;
      return this;
    }

    /**
     * The tokens each attempt takes from the guard's rate limit: an estimate of the prompt's (an upper bound: prompt
     * tokens plus max tokens), corrected by the usage the response reports. Without it, an attempt takes one request
     * and no tokens.
     */
    public Builder tokenEstimate(ToLongFunction<Prompt> tokenEstimate) {
      this.tokenEstimate = Objects.requireNonNull(tokenEstimate, "tokenEstimate");
      return this;
    }

    /** Closes the HTTP connection of each cancelled attempt: the model must be built with its customizer. */
    public Builder cancellableCalls(CancellableCalls calls) {
      this.calls = Objects.requireNonNull(calls, "calls");
      return this;
    }

    public BreakwaterAdvisor build() {
      return new BreakwaterAdvisor(this);
    }
  }
}
