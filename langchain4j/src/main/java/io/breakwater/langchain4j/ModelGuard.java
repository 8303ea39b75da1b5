package io.breakwater.langchain4j;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.StreamingChatModel;
import io.breakwater.stream.llm.LlmGuard;
import java.util.Objects;

/**
 * Breakwater's guards for LangChain4j chat models, in one line:
 *
 * <pre>{@code
 * StreamingChatModel model = ModelGuard.of("openai").guard(openAiStreamingChatModel);
 * ChatModel blocking = ModelGuard.of("openai").guard(openAiChatModel);
 * }</pre>
 *
 * Each request of a guarded model runs under an {@link LlmGuard}: the deadline (the guard's, or for
 * {@link GuardedStreamingChatModel#tokens} the one in the subscriber's Reactor Context), retries only before the first
 * content (with {@code Retry-After}), an optional first-token hedge, the breaker, an optional rate limit, and the
 * timeouts (a stream's first content then no stall longer than idle; a blocking call's call timeout).
 *
 * <ul>
 *   <li><b>Content is progress</b>: partial text, thinking and tool calls; the handler's complete callback is not.
 *       A stream is retried only while it has delivered no content; after it, a stall ends it with an
 *       {@link io.breakwater.stream.IdleTimeoutException} passed to the handler's {@code onError}, after the partial
 *       answer.</li>
 *   <li><b>Errors</b>: an HTTP error status reaches the retry and the breaker as an
 *       {@link io.breakwater.failure.HttpStatusException} (with the response's headers, so {@code Retry-After}, when
 *       the model is built with a {@link CancellableHttpClientBuilder}).</li>
 *   <li><b>Cancellation</b> ({@code StreamingHandle.cancel()}, a timeout, a lost hedge) closes the attempt's
 *       connection when the model is built with a {@link CancellableHttpClientBuilder}.</li>
 *   <li><b>Blocking calls</b> run on the guard's blocking scheduler and are waited for on the caller's thread.</li>
 * </ul>
 *
 * <p>Immutable and thread-safe.
 */
public final class ModelGuard {

  private final LlmGuard guard;

  private ModelGuard(LlmGuard guard) {
    this.guard = guard;
  }

  /** The guards of the model {@code name} with every default ({@link LlmGuard#of}). */
  public static ModelGuard of(String name) {
    return new ModelGuard(LlmGuard.of(name));
  }

  /** The guards of {@code guard}. */
  public static ModelGuard of(LlmGuard guard) {
    return new ModelGuard(Objects.requireNonNull(guard, "guard"));
  }

  /** {@code model}, guarded. */
  public GuardedStreamingChatModel guard(StreamingChatModel model) {
    return new GuardedStreamingChatModel(Objects.requireNonNull(model, "model"), guard);
  }

  /** {@code model}, guarded. */
  public GuardedChatModel guard(ChatModel model) {
    return new GuardedChatModel(Objects.requireNonNull(model, "model"), guard);
  }

  /** The guard of each request. */
  public LlmGuard guard() {
    return guard;
  }
}
