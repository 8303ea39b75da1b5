package io.breakwater.examples.cookbook;

import dev.langchain4j.exception.HttpException;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.PartialResponse;
import dev.langchain4j.model.chat.response.PartialResponseContext;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.chat.response.StreamingHandle;
import io.breakwater.failure.HttpStatusException;
import java.util.Map;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Schedulers;

/**
 * Cookbook: a LangChain4j {@link StreamingChatModel} as a {@code Flux} of tokens, so that Breakwater's stream
 * operators can time it, retry it and cancel it.
 *
 * <pre>{@code
 * Flux<String> tokens = LangChain4jTokens.tokens(model, ChatRequest.builder()
 *     .messages(UserMessage.from("Plan a trip to Lyon")).build());
 * }</pre>
 *
 * <ul>
 *   <li><b>Lazy:</b> each subscription sends its own request; nothing is sent at assembly.</li>
 *   <li><b>Threads:</b> the request starts on {@code Schedulers.boundedElastic()}. LangChain4j's JDK client reads
 *       the stream in a stage of the response's future, and a stage added to a future that has already completed
 *       runs on the thread that adds it: on a fast server that is the thread that calls {@code chat}, which then
 *       blocks reading the whole stream. Started from a retry's timer or an event loop, that would hold a thread
 *       that must never block.</li>
 *   <li><b>Backpressure:</b> the model pushes tokens as its server sends them and cannot be paused, so they are
 *       buffered, up to {@link #MAX_BUFFERED_TOKENS}; a subscriber that falls further behind fails with an overflow
 *       {@code IllegalStateException} instead of growing the heap without bound.</li>
 *   <li><b>Errors:</b> an HTTP error status becomes an {@link HttpStatusException}, so that the default
 *       {@code FailureClassifier} classifies it (429 rate limited, 5xx server error, 400 invalid argument); other
 *       errors pass as they are (the classifier reads their causes: timeouts, resets).</li>
 *   <li><b>Cancellation</b> closes the stream's response body, and with it the connection: directly when the model
 *       is built with a {@link CancellableHttpClientBuilder}, else through the {@link StreamingHandle} LangChain4j
 *       hands out with each partial response. LangChain4j 1.19 hands out no handle before the first token, so
 *       without that builder a stream cancelled before its first token is closed only when that token comes.</li>
 * </ul>
 */
// snippet:cookbook-langchain4j-adapter
public final class LangChain4jTokens {

  /** The most tokens kept for a subscriber that does not request them: far more than one answer's worth. */
  public static final int MAX_BUFFERED_TOKENS = 4096;

  private LangChain4jTokens() {}

  /** The answer to {@code request}, token by token; cancelling the Flux cancels the model's stream. */
  public static Flux<String> tokens(StreamingChatModel model, ChatRequest request) {
    return Flux.<String>create(sink -> {
          TokenHandler handler = new TokenHandler(sink);
          sink.onCancel(handler::cancel);
          // the tokens come on the HTTP client's threads, or on this one when the response is already there
          handler.body.start(() -> model.chat(request, handler));
        }, FluxSink.OverflowStrategy.IGNORE)
        .subscribeOn(Schedulers.boundedElastic())      // so that this thread may block reading the stream
        .onBackpressureBuffer(MAX_BUFFERED_TOKENS);   // the model cannot be paused: buffer, bounded
  }

  /** Forwards LangChain4j's callbacks to the sink; cancels LangChain4j's stream when the sink is cancelled. */
  private static final class TokenHandler implements StreamingChatResponseHandler {

    private final FluxSink<String> sink;
    // the response body, if the model is built to give it
    private final CancellableHttpClientBuilder.Body body = new CancellableHttpClientBuilder.Body();
    private volatile StreamingHandle handle;  // LangChain4j's, handed out with each token
    private volatile boolean cancelled;

    TokenHandler(FluxSink<String> sink) {
      this.sink = sink;
    }

    @Override
    public void onPartialResponse(PartialResponse partial, PartialResponseContext context) {
      handle = context.streamingHandle();
      if (cancelled) {
        handle.cancel();                      // cancelled before this first token came
      } else if (!partial.text().isEmpty()) {
        sink.next(partial.text());
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
      sink.complete();
    }

    @Override
    public void onError(Throwable error) {
      if (!cancelled) {                       // a cancelled stream ends with an I/O error nobody waits for
        sink.error(classifiable(error));
      }
    }

    /** LangChain4j's HTTP errors as Breakwater's, classified by status (LangChain4j keeps no headers). */
    static Throwable classifiable(Throwable error) {
      for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
        if (t instanceof HttpException http) {
          return new HttpStatusException(http.statusCode(), Map.of(), http.getMessage()).initCause(error);
        }
      }
      return error;
    }
  }
}
// end-snippet
