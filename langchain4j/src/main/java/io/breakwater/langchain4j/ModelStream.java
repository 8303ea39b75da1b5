package io.breakwater.langchain4j;

import dev.langchain4j.exception.HttpException;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.CompleteToolCall;
import dev.langchain4j.model.chat.response.PartialResponse;
import dev.langchain4j.model.chat.response.PartialResponseContext;
import dev.langchain4j.model.chat.response.PartialThinking;
import dev.langchain4j.model.chat.response.PartialThinkingContext;
import dev.langchain4j.model.chat.response.PartialToolCall;
import dev.langchain4j.model.chat.response.PartialToolCallContext;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.chat.response.StreamingHandle;
import io.breakwater.failure.HttpStatusException;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Scheduler;

/**
 * One streaming request of a LangChain4j {@link StreamingChatModel} as a {@code Flux} of its handler's callbacks, so
 * that Breakwater's stream operators can time it, retry it and cancel it.
 *
 * <ul>
 *   <li><b>Lazy:</b> each subscription sends its own request; nothing is sent at assembly.</li>
 *   <li><b>Threads:</b> the request starts on a scheduler whose threads may block (the guard's, bounded-elastic by default). LangChain4j's JDK client reads
 *       the stream in a stage of the response's future, and a stage added to a future that has already completed
 *       runs on the thread that adds it: on a fast server that is the thread that calls {@code chat}, which then
 *       blocks reading the whole stream. Started from a retry's timer or an event loop, that would hold a thread
 *       that must never block.</li>
 *   <li><b>Backpressure:</b> the model pushes events as its server sends them and cannot be paused, so they are
 *       buffered, up to {@link #MAX_BUFFERED_EVENTS}; a subscriber that falls further behind fails with an overflow
 *       {@code IllegalStateException} instead of growing the heap without bound.</li>
 *   <li><b>Errors:</b> an HTTP error status becomes an {@link HttpStatusException}, with the response's headers when
 *       the model is built with a {@link CancellableHttpClientBuilder} (LangChain4j keeps none), so that the default
 *       {@code FailureClassifier} classifies it and a retry reads its {@code Retry-After}; other errors pass as they
 *       are (the classifier reads their causes: timeouts, resets).</li>
 *   <li><b>Cancellation</b> closes the stream's response body, and with it the connection: directly when the model
 *       is built with a {@link CancellableHttpClientBuilder}, else through the {@link StreamingHandle} LangChain4j
 *       hands out with each partial response. LangChain4j 1.19 hands out no handle before the first token, so
 *       without that builder a stream cancelled before its first token is closed only when that token comes.</li>
 * </ul>
 */
final class ModelStream {

  /** The most events kept for a subscriber that does not request them: far more than one answer's worth. */
  static final int MAX_BUFFERED_EVENTS = 4096;

  private ModelStream() {}

  /**
   * The events of the answer to {@code request}, started on {@code starting}; cancelling the Flux cancels the model's
   * stream.
   */
  static Flux<ModelEvent> events(StreamingChatModel model, ChatRequest request, Scheduler starting) {
    return Flux.<ModelEvent>create(sink -> {
          EventHandler handler = new EventHandler(sink);
          sink.onCancel(handler::cancel);
          // the events come on the HTTP client's threads, or on this one when the response is already there
          handler.body.start(() -> model.chat(request, handler));
        }, FluxSink.OverflowStrategy.IGNORE)
        .subscribeOn(starting)                        // so that this thread may block reading the stream
        .onBackpressureBuffer(MAX_BUFFERED_EVENTS);   // the model cannot be paused: buffer, bounded
  }

  /** LangChain4j's HTTP errors as Breakwater's, classified by status, with {@code headers} if they are known. */
  static Throwable classifiable(Throwable error, @Nullable Map<String, List<String>> headers) {
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof HttpException http && http.statusCode() >= 100 && http.statusCode() <= 599) {
        return new HttpStatusException(http.statusCode(), headers == null ? Map.of() : headers, http.getMessage())
            .initCause(error);
      }
    }
    return error;
  }

  /** Forwards LangChain4j's callbacks to the sink; cancels LangChain4j's stream when the sink is cancelled. */
  private static final class EventHandler implements StreamingChatResponseHandler {

    private final FluxSink<ModelEvent> sink;
    // the response body, if the model is built to give it
    private final CancellableHttpClientBuilder.Body body = new CancellableHttpClientBuilder.Body();
    private volatile @Nullable StreamingHandle handle;  // LangChain4j's, handed out with each event
    private volatile boolean cancelled;

    EventHandler(FluxSink<ModelEvent> sink) {
      this.sink = sink;
    }

    private void next(StreamingHandle current, ModelEvent event) {
      handle = current;
      if (cancelled) {
        current.cancel();                     // cancelled before this first event came
      } else {
        sink.next(event);
      }
    }

    @Override
    public void onPartialResponse(PartialResponse partial, PartialResponseContext context) {
      next(context.streamingHandle(), new ModelEvent.Text(partial));
    }

    @Override
    public void onPartialThinking(PartialThinking partial, PartialThinkingContext context) {
      next(context.streamingHandle(), new ModelEvent.Thinking(partial));
    }

    @Override
    public void onPartialToolCall(PartialToolCall partial, PartialToolCallContext context) {
      next(context.streamingHandle(), new ModelEvent.ToolCallPart(partial));
    }

    @Override
    public void onCompleteToolCall(CompleteToolCall call) {
      if (!cancelled) {
        sink.next(new ModelEvent.ToolCallDone(call));
      }
    }

    void cancel() {
      cancelled = true;
      body.close();                           // closes the connection, even before the first token
      StreamingHandle current = handle;
      if (current != null) {
        current.cancel();                     // does the same, with LangChain4j's own handle
      }
    }

    @Override
    public void onCompleteResponse(ChatResponse response) {
      sink.next(new ModelEvent.Complete(response));
      sink.complete();
    }

    @Override
    public void onError(Throwable error) {
      if (!cancelled) {                       // a cancelled stream ends with an I/O error nobody waits for
        sink.error(classifiable(error, body.headers()));
      }
    }
  }
}
