package io.breakwater.langchain4j;

import dev.langchain4j.http.client.HttpClient;
import dev.langchain4j.http.client.HttpClientBuilder;
import dev.langchain4j.http.client.HttpRequest;
import dev.langchain4j.http.client.SuccessfulHttpResponse;
import dev.langchain4j.http.client.jdk.JdkHttpClient;
import dev.langchain4j.http.client.jdk.JdkHttpClientBuilder;
import dev.langchain4j.http.client.sse.ServerSentEventListener;
import dev.langchain4j.http.client.sse.ServerSentEventParser;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * LangChain4j's JDK HTTP client with streams that can be closed whatever they have received: nothing (not even the
 * response's headers), keep-alives only, or tokens. LangChain4j 1.19 hands out a {@code StreamingHandle} only with a
 * partial response, so a stream whose model never sends a token cannot be cancelled through it: its connection, and
 * the client thread blocked reading it, would live as long as the server keeps sending keep-alives (or, without a
 * response, until the request timeout). Built with this builder, a model gives {@link GuardedStreamingChatModel} each
 * stream it starts: first its request (cancelled on cancellation: the JDK client closes its connection), then its
 * response body (closed on cancellation), and the response's headers, which LangChain4j does not keep (a
 * {@code Retry-After} is read from them).
 *
 * <pre>{@code
 * OpenAiStreamingChatModel.builder()
 *     .httpClientBuilder(new CancellableHttpClientBuilder())
 *     ...
 * }</pre>
 *
 * <p>The stream reaches its {@link Body} through the thread that starts the request: LangChain4j's OpenAI model calls
 * the HTTP client, which calls the JDK client's {@code sendAsync}, on the thread that calls {@code chat}. A model that
 * started its request on another thread would leave the body unknown, and cancellation would fall back to the
 * {@code StreamingHandle}. Thread-safe.
 */
public final class CancellableHttpClientBuilder implements HttpClientBuilder {

  private static final ThreadLocal<Body> STARTING = new ThreadLocal<>();

  private final JdkHttpClientBuilder delegate = JdkHttpClient.builder()
      .httpClientBuilder(new CancellableJdkClientBuilder(java.net.http.HttpClient.newBuilder(), STARTING::get));

  /**
   * One stream: its request until the response comes, then its response body. Closing it cancels the request (the
   * JDK client closes its connection) or closes the body (which closes the connection); what comes after it is closed
   * is closed as it comes.
   */
  static final class Body {

    private static final Object CLOSED = new Object();

    private final AtomicReference<Object> current = new AtomicReference<>();
    private volatile @Nullable Map<String, List<String>> headers;

    /** Runs {@code start}, which starts at most one streaming request on this thread, as this body's request. */
    void start(Runnable start) {
      STARTING.set(this);
      try {
        start.run();
      } finally {
        STARTING.remove();
      }
    }

    /** The request was sent; {@code response} completes when its headers come. */
    void requested(CompletableFuture<?> response) {
      if (!current.compareAndSet(null, response)) {
        response.cancel(true);
      }
    }

    /** The response's headers came. */
    void responded(Map<String, List<String>> headers) {
      this.headers = headers;
    }

    /** The response's headers, or {@code null} before they came (or without this builder). */
    @Nullable Map<String, List<String>> headers() {
      return headers;
    }

    void opened(InputStream body) {
      Object before = current.get();
      if (before == CLOSED || !current.compareAndSet(before, body)) {
        closeQuietly(body);
      }
    }

    void close() {
      Object previous = current.getAndSet(CLOSED);
      if (previous instanceof CompletableFuture<?> request) {
        request.cancel(true);             // no response yet: the JDK client aborts the exchange
      } else if (previous instanceof InputStream body) {
        closeQuietly(body);
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

      @Override
      public void execute(HttpRequest request, ServerSentEventParser parser, ServerSentEventListener listener) {
        Body body = STARTING.get();           // set by ModelStream around model.chat(..)
        if (body == null) {
          client.execute(request, parser, listener);
          return;
        }
        // the JDK client's sendAsync, on this thread, hands the request to the body (CancellableJdkClientBuilder)
        client.execute(request, (stream, events) -> {
          body.opened(stream);                // now cancelling closes the body
          parser.parse(stream, events);
        }, listener);
      }
    };
  }
}
