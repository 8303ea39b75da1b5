package io.breakwater.internal.stream.llm;

import io.breakwater.http.HttpResponses;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicReference;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.http.client.HttpClient;
import reactor.util.context.Context;

/**
 * Attempts over Reactor Netty: {@code POST path} with the body (and {@code Last-Event-ID} to resume by event id), or
 * {@code GET path/{id}?stream=true&starting_after=N} to resume an OpenAI Responses background response. An error
 * status fails with {@link HttpResponses#statusError} (at most 4 KiB of the body read, then the connection closed).
 * Cancelling an attempt closes its connection, also before the response has arrived, so that no request is left
 * running on the server and no half-read connection returns to the pool.
 */
public final class HttpTransport implements Transport {

  static {
    // HttpResponses' static initialiser (through the Redactor's) builds a Jackson mapper, loading its classes from jar
    // files: it runs here, when a client is built, not on an event loop at the first error status.
    try {
      Class.forName(HttpResponses.class.getName(), true, HttpTransport.class.getClassLoader());
    } catch (ClassNotFoundException impossible) {
      throw new IllegalStateException(impossible);
    }
  }

  /** Context key under which an attempt receives its connection, to close it when the attempt is cancelled. */
  private static final Object CONNECTION = new Object();

  private final HttpClient http;
  private final String path;

  /** @param http the client with base URL, headers and the deadline header set; its retry disabled */
  public HttpTransport(HttpClient http, String path) {
    this.http = http.doOnRequest((request, connection) -> request.currentContextView()
        .<AtomicReference<Connection>>getOrEmpty(CONNECTION).ifPresent(ref -> ref.set(connection)));
    this.path = path;
  }

  @Override
  public Flux<ByteBuf> open(Attempt attempt) {
    return Flux.defer(() -> {
      AtomicReference<Connection> connection = new AtomicReference<>();
      String lastEventId = attempt.lastEventId();
      HttpClient client = lastEventId == null ? http : http.headers(h -> h.set("Last-Event-ID", lastEventId));
      HttpClient.ResponseReceiver<?> request = attempt.responseId() != null
          ? client.get().uri(path + "/" + URLEncoder.encode(attempt.responseId(), StandardCharsets.UTF_8)
              + "?stream=true&starting_after=" + attempt.startingAfter())
          : client.post().uri(path).send(Mono.fromSupplier(() -> Unpooled.wrappedBuffer(attempt.body())));
      return request
          .response((response, body) -> response.status().code() >= 300
              ? HttpResponses.<ByteBuf>statusError(response, body)
              : body)
          .doOnCancel(() -> {
            Connection c = connection.get();
            if (c != null) {
              c.dispose();
            }
          })
          .contextWrite(Context.of(CONNECTION, connection));
    });
  }
}
