package io.breakwater.limit;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * What one call weighs against a {@link RateLimit}: one request and an estimate of its tokens, known before the call,
 * corrected after it by the actual usage read from its result, and optionally the provider's rate-limit headers read
 * from its result.
 *
 * <pre>{@code
 * long estimate = promptTokens + maxTokens;                        // an upper bound, as the providers count
 * Mono<Reply> reply = llm.complete(prompt, maxTokens)
 *     .transformDeferred(throttledBy(openai, CallWeight.tokens(estimate, Reply::totalTokens)
 *         .headers(Reply::headers)));
 * }</pre>
 *
 * <ul>
 *   <li><b>Estimate.</b> The tokens are taken before the call. Estimate with an upper bound (the prompt's tokens plus
 *       {@code max_tokens}): the provider may count a call before its correction arrives.</li>
 *   <li><b>Actual usage.</b> {@code actual} is applied to every element; it returns the call's usage so far, or a
 *       negative number when the element carries none (a stream's usage comes in its last chunks). When the call
 *       ends, the last figure replaces the estimate: unused tokens come back, extra ones are taken. A call that
 *       fails or is cancelled after it was sent keeps its estimate.</li>
 *   <li><b>Headers.</b> {@code headers} returns the response's headers from an element, or {@code null}; the first
 *       element with headers updates the limit through its {@link ProviderRateLimits}. The headers of an
 *       {@link io.breakwater.failure.HttpStatusException} are read without this.</li>
 * </ul>
 *
 * <p>Immutable; make one per call.
 *
 * @param <T> the call's elements
 */
public final class CallWeight<T> {

  private static final CallWeight<Object> ONE_REQUEST = new CallWeight<>(0, null, null);

  private final long estimate;
  @Nullable
  private final ToLongFunction<? super T> actual;
  @Nullable
  private final Function<? super T, ? extends Map<String, ? extends List<String>>> headers;

  private CallWeight(long estimate, @Nullable ToLongFunction<? super T> actual,
      @Nullable Function<? super T, ? extends Map<String, ? extends List<String>>> headers) {
    if (estimate < 0) {
      throw new IllegalArgumentException("CallWeight estimate is " + estimate + " tokens: give zero or more");
    }
    this.estimate = estimate;
    this.actual = actual;
    this.headers = headers;
  }

  /** One request and no tokens: the weight of {@code throttledBy(limit)}. */
  @SuppressWarnings("unchecked")
  public static <T> CallWeight<T> oneRequest() {
    return (CallWeight<T>) ONE_REQUEST;
  }

  /** One request and {@code estimate} tokens, never corrected. */
  public static <T> CallWeight<T> tokens(long estimate) {
    return new CallWeight<>(estimate, null, null);
  }

  /** One request and {@code estimate} tokens, corrected by {@code actual} when the call ends. */
  public static <T> CallWeight<T> tokens(long estimate, ToLongFunction<? super T> actual) {
    return new CallWeight<>(estimate, Objects.requireNonNull(actual, "actual"), null);
  }

  /** This weight, with the provider's rate-limit headers read from the call's elements by {@code headers}. */
  public <U extends T> CallWeight<U> headers(
      Function<? super U, ? extends Map<String, ? extends List<String>>> headers) {
    return new CallWeight<U>(estimate, actual, Objects.requireNonNull(headers, "headers"));
  }

  /** The tokens taken before the call. */
  public long estimate() {
    return estimate;
  }

  /** The reader of actual usage, or {@code null}. */
  @Nullable
  public ToLongFunction<? super T> actual() {
    return actual;
  }

  /** The reader of response headers, or {@code null}. */
  @Nullable
  public Function<? super T, ? extends Map<String, ? extends List<String>>> headers() {
    return headers;
  }

  @Override
  public String toString() {
    return "CallWeight{1 request, " + estimate + " tokens" + (actual != null ? ", corrected" : "")
        + (headers != null ? ", reads headers" : "") + "}";
  }
}
