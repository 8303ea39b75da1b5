package io.breakwater.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.failure.HttpStatusException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.tcp.TcpServer;

/** Real Reactor Netty servers on loopback answer with statuses and bodies of every size. */
class HttpResponsesIT {

  private static final int CHUNK = 64 * 1024;

  private DisposableServer server;
  private final ConnectionProvider pool = ConnectionProvider.create("http-responses-it", 4);
  private final AtomicLong bytesSent = new AtomicLong();
  private final CountDownLatch serverConnectionClosed = new CountDownLatch(1);

  @AfterEach
  void stop() {
    pool.disposeLater().block(Duration.ofSeconds(5));
    if (server != null) {
      server.disposeNow();
    }
  }

  private HttpClient client() {
    return HttpClient.create(pool).host("127.0.0.1").port(server.port()).disableRetry(true);
  }

  private void serve(java.util.function.Function<HttpServerResponse, org.reactivestreams.Publisher<Void>> answer) {
    server = HttpServer.create().host("127.0.0.1").port(0)
        .doOnConnection(c -> c.onDispose(serverConnectionClosed::countDown))
        .handle((req, res) -> answer.apply(res))
        .bindNow();
  }

  /** An endless body, produced only as fast as the client reads it. */
  private Flux<ByteBuf> endless() {
    byte[] chunk = new byte[CHUNK];
    Arrays.fill(chunk, (byte) 'x');
    return Flux.<ByteBuf>generate(sink -> sink.next(Unpooled.wrappedBuffer(chunk)))
        .doOnNext(b -> bytesSent.addAndGet(CHUNK))
        .take(4096);   // 256 MiB at most
  }

  @Test
  void aHugeErrorBodyIsReadOnlyUpToTheExcerptBoundAndItsConnectionClosed() throws InterruptedException {
    serve(res -> res.status(500).send(endless()));

    assertThatThrownBy(() -> HttpResponses.bodyAsString(client().get().uri("/")).block(Duration.ofSeconds(10)))
        .isInstanceOfSatisfying(HttpStatusException.class, e -> {
          assertThat(e.status()).isEqualTo(500);
          assertThat(e.getMessage()).hasSizeLessThan(300).endsWith("…");
        });
    assertThat(serverConnectionClosed.await(5, TimeUnit.SECONDS)).as("connection closed by the client").isTrue();
    // the server wrote what fits the socket buffers, not the 256 MiB it offered
    assertThat(bytesSent.get()).isLessThan(64L * 1024 * 1024);
  }

  @Test
  void aBodyOverItsBoundFailsTypedAndClosesTheConnection() throws InterruptedException {
    serve(res -> res.status(200).send(endless()));

    assertThatThrownBy(() -> HttpResponses.bodyAsBytes(client().get().uri("/"), 1024 * 1024)
        .block(Duration.ofSeconds(10)))
        .isInstanceOfSatisfying(BodyTooLargeException.class, e -> assertThat(e.maxBytes()).isEqualTo(1024 * 1024));
    assertThat(serverConnectionClosed.await(5, TimeUnit.SECONDS)).as("connection closed by the client").isTrue();
    assertThat(bytesSent.get()).isLessThan(64L * 1024 * 1024);
  }

  @Test
  void anErrorWhoseBodyBreaksOffStillFailsWithItsStatusAndHeaders() {
    // a raw server: 1 000 bytes announced, 9 sent, then the connection closes while the excerpt is being read
    DisposableServer raw = TcpServer.create().host("127.0.0.1").port(0)
        .handle((in, out) -> in.receive().take(1).then(out.sendString(Mono.just("HTTP/1.1 429 Too Many Requests\r\n"
            + "Retry-After: 3\r\nContent-Length: 1000\r\n\r\nslow down")).then()))
        .bindNow();
    try {
      HttpClient client = HttpClient.create(pool).host("127.0.0.1").port(raw.port()).disableRetry(true);

      assertThatThrownBy(() -> HttpResponses.bodyAsString(client.get().uri("/")).block(Duration.ofSeconds(5)))
          .isInstanceOfSatisfying(HttpStatusException.class, e -> {
            assertThat(e.status()).isEqualTo(429);
            assertThat(e.header("Retry-After")).contains("3");
          });
    } finally {
      raw.disposeNow();
    }
  }

  @Test
  void aBodyIsDecodedInTheCharsetItsContentTypeNames() {
    serve(res -> res.status(200).header("Content-Type", "text/plain; charset=ISO-8859-1")
        .send(Mono.just(Unpooled.wrappedBuffer("Zürich".getBytes(StandardCharsets.ISO_8859_1)))));

    assertThat(HttpResponses.bodyAsString(client().get().uri("/")).block(Duration.ofSeconds(5))).isEqualTo("Zürich");
  }

  @Test
  void anEmptyBodyGivesAnEmptyMono() {
    serve(res -> res.status(204).send());

    assertThat(HttpResponses.bodyAsString(client().get().uri("/")).blockOptional(Duration.ofSeconds(5))).isEmpty();
  }

  @Test
  void anErrorExcerptHasItsControlCharactersEscapedAndItsSecretsMasked() {
    serve(res -> res.status(401)
        .sendString(Mono.just("{\"token\": \"sk-live-123456\"}\r\nINFO forged log line")));

    assertThatThrownBy(() -> HttpResponses.bodyAsString(client().get().uri("/")).block(Duration.ofSeconds(5)))
        .isInstanceOfSatisfying(HttpStatusException.class, e -> assertThat(e.getMessage())
            .doesNotContain("sk-live-123456")
            .doesNotContain("\r").doesNotContain("\n")
            .contains("\\r\\nINFO forged log line"));
  }
}
