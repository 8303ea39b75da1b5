package io.breakwater.http;

import io.breakwater.failure.HttpStatusException;
import io.breakwater.internal.http.ErrorExcerpt;
import io.breakwater.internal.http.ServerText;
import io.netty.handler.codec.http.HttpUtil;
import java.io.ByteArrayOutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientResponse;

/**
 * Reactor Netty responses as bodies or typed failures, with bounded memory. An answer with status 400 or above
 * fails with an {@link HttpStatusException} that carries the status and every response header ({@code Retry-After},
 * {@code retry-after-ms}, {@code x-should-retry}, the rate-limit headers), so {@code retryWithBudget} classifies it
 * and honours its wait. Any other answer gives its body.
 *
 * <pre>{@code
 * Mono<String> weather = HttpResponses.bodyAsString(client.get().uri("/weather"))
 *     .transformDeferred(withDeadline(Duration.ofSeconds(10)));
 * }</pre>
 *
 * <ul>
 *   <li><b>Error bodies</b> are read up to {@value #MAX_EXCERPT_BYTES} bytes, then the connection is closed: a
 *       hostile or broken server cannot make the client buffer a large error page. The exception's message quotes
 *       at most {@value ServerText#MAX_CHARS} characters of it, with control characters escaped and the values of
 *       sensitive fields ({@code "token": ...}) masked.</li>
 *   <li><b>Bodies</b> are read up to {@code maxBodyBytes} ({@value #DEFAULT_MAX_BODY_BYTES} bytes by default); a
 *       longer one fails with {@link BodyTooLargeException} and the connection is closed.</li>
 *   <li>An empty body gives an empty {@code Mono}, as {@code responseContent().aggregate()} does.</li>
 * </ul>
 */
public final class HttpResponses {

  /** The default bound on a body read by {@link #bodyAsString} and {@link #bodyAsBytes}: 16 MiB. */
  public static final int DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

  /** The most bytes of an error body that are read: 4 KiB. */
  public static final int MAX_EXCERPT_BYTES = ErrorExcerpt.MAX_BYTES;

  private static final ErrorExcerpt EXCERPT = ErrorExcerpt.standard();

  private HttpResponses() {}

  /** The body as text (in the charset of its {@code Content-Type}, else UTF-8), or an {@link HttpStatusException}. */
  public static Mono<String> bodyAsString(HttpClient.ResponseReceiver<?> request) {
    return bodyAsString(request, DEFAULT_MAX_BODY_BYTES);
  }

  /** {@link #bodyAsString(HttpClient.ResponseReceiver)} with a bound of your own on the body's length in bytes. */
  public static Mono<String> bodyAsString(HttpClient.ResponseReceiver<?> request, int maxBodyBytes) {
    checkBound(maxBodyBytes);
    return request.response((response, body) -> response.status().code() >= 400
            ? statusError(response, body)
            : read(body, maxBodyBytes, false).map(bytes -> new String(bytes, charset(response))))
        .next();
  }

  /** The body's bytes, or an {@link HttpStatusException}. */
  public static Mono<byte[]> bodyAsBytes(HttpClient.ResponseReceiver<?> request) {
    return bodyAsBytes(request, DEFAULT_MAX_BODY_BYTES);
  }

  /** {@link #bodyAsBytes(HttpClient.ResponseReceiver)} with a bound of your own on the body's length. */
  public static Mono<byte[]> bodyAsBytes(HttpClient.ResponseReceiver<?> request, int maxBodyBytes) {
    checkBound(maxBodyBytes);
    return request.response((response, body) -> response.status().code() >= 400
            ? HttpResponses.<byte[]>statusError(response, body)
            : read(body, maxBodyBytes, false))
        .next();
  }

  /**
   * For a {@code response((response, body) -> ...)} handler of your own: fails with the {@link HttpStatusException}
   * for {@code response}, after reading at most {@value #MAX_EXCERPT_BYTES} bytes of {@code body} and closing the
   * connection. A body that breaks off while it is read only shortens the excerpt: the failure is still the status,
   * with its headers.
   *
   * <pre>{@code
   * client.get().uri("/events").response((response, body) -> response.status().code() >= 400
   *     ? HttpResponses.statusError(response, body)
   *     : events.events(body));
   * }</pre>
   */
  public static <T> Mono<T> statusError(HttpClientResponse response, ByteBufFlux body) {
    return read(body, MAX_EXCERPT_BYTES, true)
        .onErrorResume(unreadable -> Mono.empty())
        .defaultIfEmpty(new byte[0])
        .flatMap(excerpt -> Mono.error(EXCERPT.failure(response.status().code(), headers(response), excerpt,
            charset(response))));
  }

  /** The response's headers as a map of every value by name, for an {@link HttpStatusException}. */
  public static Map<String, List<String>> headers(HttpClientResponse response) {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    response.responseHeaders().names().forEach(name -> headers.put(name, response.responseHeaders().getAll(name)));
    return headers;
  }

  /**
   * Reads at most {@code max} bytes. Past the bound an excerpt stops quietly, a body fails; either way the rest of
   * the body is cancelled, which closes the connection instead of draining it.
   */
  private static Mono<byte[]> read(ByteBufFlux body, int max, boolean excerpt) {
    return Mono.defer(() -> {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      return body.asByteArray()
          .<byte[]>handle((bytes, sink) -> {
            int room = max - out.size();
            if (bytes.length <= room) {
              out.write(bytes, 0, bytes.length);
            } else if (excerpt) {
              out.write(bytes, 0, room);
              sink.complete();
            } else {
              sink.error(new BodyTooLargeException(max));
            }
          })
          .then(Mono.fromSupplier(() -> out.size() == 0 ? null : out.toByteArray()));
    });
  }

  private static Charset charset(HttpClientResponse response) {
    String contentType = response.responseHeaders().get("Content-Type");
    return contentType == null ? StandardCharsets.UTF_8 : HttpUtil.getCharset(contentType, StandardCharsets.UTF_8);
  }

  private static void checkBound(int maxBodyBytes) {
    if (maxBodyBytes <= 0) {
      throw new IllegalArgumentException("maxBodyBytes is " + maxBodyBytes + ": give a positive number of bytes");
    }
  }
}
