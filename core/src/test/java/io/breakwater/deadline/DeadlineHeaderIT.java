package io.breakwater.deadline;

import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
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
