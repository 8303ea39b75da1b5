package io.breakwater.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelOption;
import io.netty.channel.FixedRecvByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.ConnectionProvider;

/**
 * The unit tests of {@link HttpResponses} (the ones PIT runs): a Reactor Netty server on loopback answers each with
 * a small body, so every bound is met to the byte. {@link HttpResponsesIT} has the large and endless bodies.
 */
class HttpResponsesTest {

  private static final Duration WAIT = Duration.ofSeconds(5);

  private final ConnectionProvider pool = ConnectionProvider.create("http-responses-test", 4);
  private DisposableServer server;

  @AfterEach
  void stop() {
    pool.disposeLater().block(WAIT);
    if (server != null) {
      server.disposeNow();
    }
  }

  private HttpClient serve(Function<HttpServerResponse, Publisher<Void>> answer) {
    return serveRequest((req, res) -> answer.apply(res));
  }

  private HttpClient serveRequest(BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> answer) {
    server = HttpServer.create().host("127.0.0.1").port(0).handle(answer).bindNow();
    return HttpClient.create(pool).host("127.0.0.1").port(server.port()).disableRetry(true);
  }

  private static ByteBuf ascii(String text) {
    return Unpooled.wrappedBuffer(text.getBytes(StandardCharsets.US_ASCII));
  }

  /** {@code count} pieces of eight bytes, each written and flushed on its own. */
  private static Flux<ByteBuf> eightBytePieces(int count) {
    return Flux.range(0, count).map(i -> ascii("piece-" + i + "|"));
  }

  @Test
  void anErrorStatusFailsWithItsStatusEveryHeaderValueAndAnExcerptOfTheBody() {
    HttpClient client = serve(res -> res.status(429).header("Retry-After", "7")
        .addHeader("x-ratelimit-remaining-requests", "0").addHeader("x-ratelimit-remaining-requests", "1")
        .sendString(Mono.just("slow down")));

    assertThatThrownBy(() -> HttpResponses.bodyAsString(client.get().uri("/weather")).block(WAIT))
        .isInstanceOfSatisfying(HttpStatusException.class, e -> {
          assertThat(e.status()).isEqualTo(429);
          assertThat(e.header("retry-after")).contains("7");
          assertThat(e.headers().get("X-RateLimit-Remaining-Requests")).containsExactly("0", "1");
          assertThat(e.getMessage()).isEqualTo("HTTP 429: slow down");
        });
  }

  @Test
  void fourHundredIsTheFirstErrorStatusForStringsAndBytesAlike() {
    HttpClient client = serveRequest((req, res) -> res.status(Integer.parseInt(req.uri().substring(1)))
        .sendString(Mono.just("answer " + req.uri())));

    assertThat(HttpResponses.bodyAsString(client.get().uri("/399")).block(WAIT)).isEqualTo("answer /399");
    assertThat(HttpResponses.bodyAsBytes(client.get().uri("/399")).block(WAIT))
        .asString(StandardCharsets.UTF_8).isEqualTo("answer /399");
    assertThatThrownBy(() -> HttpResponses.bodyAsString(client.get().uri("/400")).block(WAIT))
        .isInstanceOfSatisfying(HttpStatusException.class, e -> assertThat(e).hasMessage("HTTP 400: answer /400"));
    assertThatThrownBy(() -> HttpResponses.bodyAsBytes(client.get().uri("/400")).block(WAIT))
        .isInstanceOfSatisfying(HttpStatusException.class, e -> assertThat(e).hasMessage("HTTP 400: answer /400"));
  }

  @Test
  void aBodyOfExactlyItsBoundIsReadWholeAcrossItsPieces() {
    HttpClient client = serve(res -> res.send(eightBytePieces(3), piece -> true));

    assertThat(HttpResponses.bodyAsString(client.get().uri("/"), 24).block(WAIT))
        .isEqualTo("piece-0|piece-1|piece-2|");
  }

  @Test
  void aBodyOneByteOverItsBoundFailsTypedAndNotRetryable() {
    HttpClient client = serve(res -> res.send(eightBytePieces(3), piece -> true));

    assertThatThrownBy(() -> HttpResponses.bodyAsBytes(client.get().uri("/"), 23).block(WAIT))
        .isInstanceOfSatisfying(BodyTooLargeException.class, e -> {
          assertThat(e.maxBytes()).isEqualTo(23);
          assertThat(e.source()).isEqualTo("http");
          assertThat(e.failureKind()).isEqualTo(FailureKind.MISCONFIGURED);
          assertThat(e).hasMessageStartingWith("Response body is longer than 23 bytes");
        });
  }

  /**
   * A hostile server sends one large piece of error body and then never ends it: the failure comes once the excerpt
   * is read, quoting the piece that crossed the excerpt bound. (The client reads up to 64 KiB at a time, so the
   * piece arrives whole.)
   */
  @Test
  void anErrorBodyThatNeverEndsFailsOnceItsExcerptIsRead() {
    String piece = "overloaded ".repeat(500);   // 5 500 bytes: past the 4 KiB excerpt bound in one piece
    HttpClient client = serve(res -> res.status(503).send(Flux.concat(Mono.just(ascii(piece)), Flux.never())))
        .option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(64 * 1024));

    assertThatThrownBy(() -> HttpResponses.bodyAsString(client.get().uri("/")).block(WAIT))
        .isInstanceOfSatisfying(HttpStatusException.class, e -> {
          assertThat(e.status()).isEqualTo(503);
          assertThat(e.getMessage()).startsWith("HTTP 503: overloaded overloaded ").endsWith("…");
        });
  }

  @Test
  void anErrorBodyIsQuotedInTheCharsetItsContentTypeNames() {
    HttpClient client = serve(res -> res.status(400).header("Content-Type", "text/plain; charset=ISO-8859-1")
        .send(Mono.just(Unpooled.wrappedBuffer("Zürich unknown".getBytes(StandardCharsets.ISO_8859_1)))));

    assertThatThrownBy(() -> HttpResponses.bodyAsBytes(client.get().uri("/")).block(WAIT))
        .isInstanceOfSatisfying(HttpStatusException.class,
            e -> assertThat(e).hasMessage("HTTP 400: Zürich unknown"));
  }

  @Test
  void aBoundThatIsNotPositiveIsRefusedWithWhatToChange() {
    HttpClient.ResponseReceiver<?> neverSent = HttpClient.create().get().uri("http://127.0.0.1:9/");

    for (int bound : List.of(0, -1, Integer.MIN_VALUE)) {
      assertThatIllegalArgumentException().isThrownBy(() -> HttpResponses.bodyAsString(neverSent, bound))
          .withMessage("maxBodyBytes is " + bound + ": give a positive number of bytes");
      assertThatIllegalArgumentException().isThrownBy(() -> HttpResponses.bodyAsBytes(neverSent, bound))
          .withMessage("maxBodyBytes is " + bound + ": give a positive number of bytes");
    }
  }
}
