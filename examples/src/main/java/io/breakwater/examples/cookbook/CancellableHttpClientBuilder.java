package io.breakwater.examples.cookbook;

import dev.langchain4j.http.client.HttpClient;
import dev.langchain4j.http.client.HttpClientBuilder;
import dev.langchain4j.http.client.HttpRequest;
import dev.langchain4j.http.client.SuccessfulHttpResponse;
import dev.langchain4j.http.client.sse.ServerSentEventListener;
import dev.langchain4j.http.client.sse.ServerSentEventParser;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * LangChain4j's HTTP client (any {@link HttpClientBuilder}, the JDK one by default) with streams that can be closed
 * before their first event. LangChain4j 1.19 hands out a {@code StreamingHandle} only with a partial response, so a
 * stream whose model never sends a token cannot be cancelled through it: its connection, and the client thread
 * blocked reading it, would live as long as the server keeps sending keep-alives. Built with this builder, a model
 * gives {@link LangChain4jTokens} the response body of each stream it starts, which it closes on cancellation.
 *
 * <pre>{@code
 * OpenAiStreamingChatModel.builder()
 *     .httpClientBuilder(new CancellableHttpClientBuilder(HttpClientBuilderLoader.loadHttpClientBuilder()))
 *     ...
 * }</pre>
 *
 * <p>The body reaches its {@link Body} through the thread that starts the request: LangChain4j's OpenAI model calls
 * the HTTP client on the thread that calls {@code chat}. A model that starts its request on another thread leaves the
 * body unknown, and cancellation falls back to the {@code StreamingHandle}. Thread-safe.
 */
public final class CancellableHttpClientBuilder implements HttpClientBuilder {

  private static final ThreadLocal<Body> STARTING = new ThreadLocal<>();

  private final HttpClientBuilder delegate;

  public CancellableHttpClientBuilder(HttpClientBuilder delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /**
   * The response body of one stream: closing it closes the stream's connection, and a body closed before the
   * response came is closed as soon as it comes.
   */
  static final class Body {

    private static final InputStream CLOSED = InputStream.nullInputStream();

    private final AtomicReference<InputStream> stream = new AtomicReference<>();

    /** Runs {@code start}, which starts at most one streaming request on this thread, as this body's request. */
    void start(Runnable start) {
      STARTING.set(this);
      try {
        start.run();
      } finally {
        STARTING.remove();
      }
    }

    void opened(InputStream body) {
      if (!stream.compareAndSet(null, body)) {
        closeQuietly(body);
      }
    }

    void close() {
      InputStream previous = stream.getAndSet(CLOSED);
      if (previous != null && previous != CLOSED) {
        closeQuietly(previous);
      }
    }

    private static void closeQuietly(InputStream body) {
      try {
        body.close();
      } catch (IOException ignored) {
        // the stream is being abandoned: nothing is waiting for its errors
      }
    }
  }

  @Override
  public Duration connectTimeout() {
    return delegate.connectTimeout();
  }

  @Override
  public CancellableHttpClientBuilder connectTimeout(Duration timeout) {
    delegate.connectTimeout(timeout);
    return this;
  }

  @Override
  public Duration readTimeout() {
    return delegate.readTimeout();
  }

  @Override
  public CancellableHttpClientBuilder readTimeout(Duration timeout) {
    delegate.readTimeout(timeout);
    return this;
  }

  @Override
  public HttpClient build() {
    HttpClient client = delegate.build();
    return new HttpClient() {
      @Override
      public SuccessfulHttpResponse execute(HttpRequest request) {
        return client.execute(request);
      }

      // snippet:cookbook-langchain4j-body
      @Override
      public void execute(HttpRequest request, ServerSentEventParser parser, ServerSentEventListener listener) {
        Body body = STARTING.get();           // set by the adapter around model.chat(..)
        if (body == null) {
          client.execute(request, parser, listener);
          return;
        }
        client.execute(request, (stream, events) -> {
          body.opened(stream);                // now cancelling can close it, token or not
          parser.parse(stream, events);
        }, listener);
      }
      // end-snippet
    };
  }
}
