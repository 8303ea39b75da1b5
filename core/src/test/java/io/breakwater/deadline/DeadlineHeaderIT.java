package io.breakwater.deadline;

import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.util.function.Tuple2;

/** A real Reactor Netty client and servers on loopback carry the deadline header across two hops. */
class DeadlineHeaderIT {

  private final DeadlineHeader header = DeadlineHeader.standard();
  private DisposableServer backend;
  private DisposableServer frontend;

  @AfterEach
  void stopServers() {
    if (frontend != null) {
      frontend.disposeNow();
    }
    if (backend != null) {
      backend.disposeNow();
    }
  }

  /** Answers with the remaining time it sees, in nanoseconds, or "none". */
  private static Mono<String> remainingSeen() {
    return Mono.deferContextual(ctx -> Mono.just(
        Deadline.from(ctx).map(d -> String.valueOf(d.remainingNanos())).orElse("none")));
  }

  private HttpClient client(DisposableServer server) {
    return header.sendOn(HttpClient.create().port(server.port()).host("127.0.0.1").disableRetry(true));
  }

  @Test
  void deadlineTravelsClientToServerToBackendAndOnlyShrinks() {
    backend = HttpServer.create().host("127.0.0.1").port(0)
        .handle(header.honour((req, res) -> res.sendString(remainingSeen())))
        .bindNow();
    HttpClient toBackend = client(backend);
    frontend = HttpServer.create().host("127.0.0.1").port(0)
        .handle(header.honour((req, res) -> res.sendString(
            remainingSeen().zipWith(toBackend.get().uri("/").responseContent().aggregate().asString(),
                (mine, theirs) -> mine + "," + theirs))))
        .bindNow();

    AtomicLong clientRemaining = new AtomicLong();
    String answer = Mono.deferContextual(ctx -> {
          clientRemaining.set(Deadline.from(ctx).orElseThrow().remainingNanos());
          return client(frontend).get().uri("/").responseContent().aggregate().asString();
        })
        .transformDeferred(withDeadline(Duration.ofSeconds(20)))
        .block(Duration.ofSeconds(20));

    String[] parts = answer.split(",");
    long frontendRemaining = Long.parseLong(parts[0]);
    long backendRemaining = Long.parseLong(parts[1]);
    assertThat(clientRemaining.get()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(20).toNanos());
    assertThat(frontendRemaining).isPositive().isLessThanOrEqualTo(clientRemaining.get());
    assertThat(backendRemaining).isPositive().isLessThanOrEqualTo(frontendRemaining);
  }

  @Test
  void requestsOutsideAnyDeadlineCarryNoHeader() {
    backend = HttpServer.create().host("127.0.0.1").port(0)
        .handle(header.honour((req, res) -> res.sendString(Mono.just(
            String.valueOf(req.requestHeaders().get(DeadlineHeader.DEFAULT_NAME))))))
        .bindNow();

    String seen = client(backend).get().uri("/").responseContent().aggregate().asString()
        .block(Duration.ofSeconds(10));

    assertThat(seen).isEqualTo("null");
  }

  @Test
  void serverRejectsAnAlreadyExpiredRequestWithoutCallingTheHandler() {
    AtomicBoolean handlerCalled = new AtomicBoolean();
    backend = HttpServer.create().host("127.0.0.1").port(0)
        .handle(header.honour((req, res) -> {
          handlerCalled.set(true);
          return res.sendString(Mono.just("ran"));
        }))
        .bindNow();

    Tuple2<Integer, String> response = HttpClient.create().port(backend.port()).host("127.0.0.1")
        .headers(h -> h.set(DeadlineHeader.DEFAULT_NAME, "0m"))
        .get().uri("/")
        .responseSingle((res, body) -> Mono.just(res.status().code()).zipWith(body.asString()))
        .block(Duration.ofSeconds(10));

    assertThat(response.getT1()).isEqualTo(504);
    assertThat(response.getT2()).contains("already expired");
    assertThat(handlerCalled).isFalse();
  }

  @Test
  void serverRejectsAMalformedHeaderWithWhatIsExpected() {
    backend = HttpServer.create().host("127.0.0.1").port(0)
        .handle(header.honour((req, res) -> res.sendString(Mono.just("ran"))))
        .bindNow();

    Tuple2<Integer, String> response = HttpClient.create().port(backend.port()).host("127.0.0.1")
        .headers(h -> h.set(DeadlineHeader.DEFAULT_NAME, "soon"))
        .get().uri("/")
        .responseSingle((res, body) -> Mono.just(res.status().code()).zipWith(body.asString()))
        .block(Duration.ofSeconds(10));

    assertThat(response.getT1()).isEqualTo(400);
    assertThat(response.getT2()).contains("expected 1 to 8 digits and a unit");
  }

  /**
   * Issue 15, medium 4: the header set server policy. {@code 25H} outlived the 24 h TTL of every {@code idempotentBy}
   * in the handler, so each failed; {@code 99999999H} became a 292-year deadline, passed downstream and used as the
   * idempotency lease. The server now clamps it to its own maximum (5 minutes by default).
   */
  @Test
  void aHeaderAboveTheServersMaximumIsClampedToItSoIdempotentCallsStillWork() {
    IdempotencyStore store = IdempotencyStore.inMemory();
    backend = HttpServer.create().host("127.0.0.1").port(0)
        .handle(header.honour((req, res) -> res.sendString(remainingSeen().flatMap(remaining ->
            Mono.just(remaining + " refunded").transformDeferred(idempotentBy(
                IdempotencyKey.of("payments.refund", req.requestHeaders().get("Order")), store, String.class))))))
        .bindNow();
    for (String value : List.of("25H", "99999999H")) {
      Tuple2<Integer, String> response = HttpClient.create().port(backend.port()).host("127.0.0.1")
          .headers(h -> h.set(DeadlineHeader.DEFAULT_NAME, value).set("Order", "order-" + value))
          .get().uri("/")
          .responseSingle((res, body) -> Mono.just(res.status().code()).zipWith(body.asString()))
          .block(Duration.ofSeconds(10));
      assertThat(response.getT1()).as(value).isEqualTo(200);
      long remaining = Long.parseLong(response.getT2().split(" ")[0]);
      assertThat(remaining).as(value).isPositive().isLessThanOrEqualTo(DeadlineHeader.DEFAULT_MAXIMUM.toNanos());
    }
  }

  @Test
  void theServersMaximumIsItsOwnSetting() {
    DeadlineHeader strict = DeadlineHeader.standard().maximum(Duration.ofSeconds(2));
    backend = HttpServer.create().host("127.0.0.1").port(0)
        .handle(strict.honour((req, res) -> res.sendString(remainingSeen())))
        .bindNow();
    String seen = HttpClient.create().port(backend.port()).host("127.0.0.1")
        .headers(h -> h.set(DeadlineHeader.DEFAULT_NAME, "10S"))
        .get().uri("/").responseContent().aggregate().asString().block(Duration.ofSeconds(10));
    assertThat(Long.parseLong(seen)).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(2).toNanos());
  }

  /** Issue 15 (low): the 400 answer echoed the raw header value, with no content type. */
  @Test
  void aMalformedHeaderIsAnsweredWithoutEchoingItAndWithAContentType() {
    backend = HttpServer.create().host("127.0.0.1").port(0)
        .handle(header.honour((req, res) -> res.sendString(Mono.just("ran"))))
        .bindNow();
    String hostile = "<script>alert(document.cookie)</script>";
    Tuple2<String, String> response = HttpClient.create().port(backend.port()).host("127.0.0.1")
        .headers(h -> h.set(DeadlineHeader.DEFAULT_NAME, hostile))
        .get().uri("/")
        .responseSingle((res, body) -> Mono.just(res.status().code() + " " + res.responseHeaders()
            .get("Content-Type")).zipWith(body.asString()))
        .block(Duration.ofSeconds(10));
    assertThat(response.getT1()).isEqualTo("400 text/plain; charset=utf-8");
    assertThat(response.getT2()).contains("expected 1 to 8 digits and a unit").doesNotContain("script", "cookie");
  }

  @Test
  void handlerStillRunningAtTheDeadlineIsCancelledAndAnswered504() {
    AtomicBoolean cancelled = new AtomicBoolean();
    backend = HttpServer.create().host("127.0.0.1").port(0)
        .handle(header.honour((req, res) -> res.sendString(Mono.delay(Duration.ofSeconds(30))
            .map(String::valueOf)
            .doOnCancel(() -> cancelled.set(true)))))
        .bindNow();

    Integer status = HttpClient.create().port(backend.port()).host("127.0.0.1")
        .headers(h -> h.set(DeadlineHeader.DEFAULT_NAME, "200m"))
        .get().uri("/")
        .responseSingle((res, body) -> Mono.just(res.status().code()))
        .block(Duration.ofSeconds(10));

    assertThat(status).isEqualTo(504);
    assertThat(cancelled).isTrue();
  }
}
