package io.breakwater.langchain4j;

import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.listener.ChatModelListener;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.response.ChatResponse;
import io.breakwater.internal.BlockingCall;
import io.breakwater.stream.llm.LlmGuard;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;

/**
 * A {@link ChatModel} guarded by an {@link LlmGuard} ({@link ModelGuard}): see there for what each request gets. Each attempt runs on the
 * guard's blocking scheduler and the caller's thread waits for the request; a failure is thrown as it is when it is a
 * {@code RuntimeException} (an {@link io.breakwater.failure.HttpStatusException}, a
 * {@link io.breakwater.retry.RetryExhaustedException}), else wrapped as {@code Mono.block()} does. Listeners, default
 * parameters, provider and capabilities are the delegate's. Thread-safe.
 */
public final class GuardedChatModel implements ChatModel {

  private final ChatModel delegate;
  private final LlmGuard guard;

  GuardedChatModel(ChatModel delegate, LlmGuard guard) {
    this.delegate = delegate;
    this.guard = guard;
  }

  @Override
  public ChatResponse chat(ChatRequest request) {
    Objects.requireNonNull(request, "request");
    Mono<ChatResponse> attempt = BlockingCall.on(guard.blockingCalls(), () -> delegate.chat(request))
        .onErrorMap(error -> ModelStream.classifiable(error, null));
    try {
      ChatResponse response = guard.call(attempt).block();
      if (response == null) {
        throw new IllegalStateException("The model '" + guard.name() + "' answered nothing");
      }
      return response;
    } catch (RuntimeException e) {
      Throwable cause = Exceptions.unwrap(e);
      throw cause instanceof RuntimeException r ? r : e;
    }
  }

  @Override
  public ChatResponse doChat(ChatRequest request) {
    return chat(request);
  }

  @Override
  public ChatRequestParameters defaultRequestParameters() {
    return delegate.defaultRequestParameters();
  }

  @Override
  public List<ChatModelListener> listeners() {
    return delegate.listeners();
  }

  @Override
  public ModelProvider provider() {
    return delegate.provider();
  }

  @Override
  public Set<Capability> supportedCapabilities() {
    return delegate.supportedCapabilities();
  }
}
