package io.breakwater.langchain4j;

import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.listener.ChatModelListener;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.chat.response.StreamingHandle;
import io.breakwater.stream.llm.LlmGuard;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A {@link StreamingChatModel} guarded by an {@link LlmGuard} ({@link ModelGuard}): see there for what each request gets. The handler's
 * callbacks are those of the delegate, with a {@link StreamingHandle} that cancels the whole guarded request (and
 * closes its connection); its {@code onError} gets the failure that ended the request. Listeners, default
 * parameters, provider and capabilities are the delegate's. Thread-safe.
 */
public final class GuardedStreamingChatModel implements StreamingChatModel {

  private final StreamingChatModel delegate;
  private final LlmGuard guard;

  GuardedStreamingChatModel(StreamingChatModel delegate, LlmGuard guard) {
    this.delegate = delegate;
    this.guard = guard;
  }

  @Override
  public void chat(ChatRequest request, StreamingChatResponseHandler handler) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(handler, "handler");
    Handle handle = new Handle();
    handle.subscription = events(request).subscribe(
        event -> event.deliver(handler, handle), handler::onError);
  }

  /**
   * The text of the answer to {@code request}, token by token, guarded as {@link #chat} is, for Reactor code: each
   * subscription sends its own request; cancelling the {@code Flux} cancels it and closes its connection (with a
   * {@link CancellableHttpClientBuilder}); thinking and tool calls count as progress but are not emitted.
   *
   * <pre>{@code
   * Flux<String> tokens = ModelGuard.of("openai").guard(model).tokens(ChatRequest.builder()
   *     .messages(UserMessage.from("Plan a trip to Lyon")).build());
   * }</pre>
   */
  public Flux<String> tokens(ChatRequest request) {
    Objects.requireNonNull(request, "request");
    return events(request).ofType(ModelEvent.Text.class).map(text -> text.partial().text())
        .filter(text -> !text.isEmpty());
  }

  /** The guarded events of one request, for the handler's callbacks. */
  Flux<ModelEvent> events(ChatRequest request) {
    return guard.stream(Flux.defer(() -> ModelStream.events(delegate, request, guard.blockingCalls())),
        ModelEvent::isContent);
  }

  @Override
  public void doChat(ChatRequest request, StreamingChatResponseHandler handler) {
    chat(request, handler);
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

  /** Cancels the guarded request. */
  private static final class Handle implements StreamingHandle {
    private volatile Disposable subscription = Mono.never().subscribe();

    @Override
    public void cancel() {
      subscription.dispose();
    }

    @Override
    public boolean isCancelled() {
      return subscription.isDisposed();
    }
  }
}
