package io.breakwater.retry;

import static io.breakwater.Breakwater.retryWithBudget;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.failure.HttpStatusException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/** Real HTTP on loopback: statuses and retry headers from a Reactor Netty server drive the retries. */
class RetryWithBudgetIT {

  private DisposableServer server;

  @AfterEach
  void stopServer() {
    if (server != null) {
      server.disposeNow();
    }
  }

  /** The call as an application writes it: an error status becomes an HttpStatusException with the headers. */
  private Mono<String> get(String path) {
    return HttpClient.create().host("127.0.0.1").port(server.port()).disableRetry(true)
        .get().uri(path)
        .responseSingle((res, body) -> {
          if (res.status().code() < 400) {
            return body.asString();
          }
          Map<String, List<String>> headers = new java.util.HashMap<>();
          res.responseHeaders().forEach(h -> headers.computeIfAbsent(h.getKey(), k -> new ArrayList<>())
              .add(h.getValue()));
          return Mono.error(new HttpStatusException(res.status().code(), headers));
        });
  }

  private static RetryPolicy policy() {
    return RetryPolicy.builder().name("it").backoff(Backoff.fixed(Duration.ofMillis(10)))
        .timeoutBase(Duration.ZERO).budget(RetryBudget.unlimited()).build();
  }

  @Test
  void serverErrorThenRateLimitWithRetryAfterMsThenSuccess() {
    AtomicInteger requests = new AtomicInteger();
    server = HttpServer.create().host("127.0.0.1").port(0)
        .handle((req, res) -> switch (requests.incrementAndGet()) {
          case 1 -> res.status(503).send();
          case 2 -> res.status(429).header("retry-after-ms", "30").send();
          default -> res.sendString(Mono.just("flights"));
        })
        .bindNow();
    String answer = get("/flights").transformDeferred(retryWithBudget(policy())).block(Duration.ofSeconds(10));
    assertThat(answer).isEqualTo("flights");
    assertThat(requests).hasValue(3);
  }

  @Test
  void shouldRetryFalseFromTheServerStopsAfterOneRequest() {
    AtomicInteger requests = new AtomicInteger();
    server = HttpServer.create().host("127.0.0.1").port(0)
        .handle((req, res) -> {
          requests.incrementAndGet();
          return res.status(500).header("x-should-retry", "false").send();
        })
        .bindNow();
    assertThatThrownBy(() -> get("/charge").transformDeferred(retryWithBudget(policy())).block(Duration.ofSeconds(10)))
        .isInstanceOfSatisfying(RetryExhaustedException.class,
            e -> assertThat(e.reason()).isEqualTo(RetryStopReason.SHOULD_NOT_RETRY));
    assertThat(requests).hasValue(1);
  }

  @Test
  void notFoundIsNotRetried() {
    AtomicInteger requests = new AtomicInteger();
    server = HttpServer.create().host("127.0.0.1").port(0)
        .handle((req, res) -> {
          requests.incrementAndGet();
          return res.status(404).send();
        })
        .bindNow();
    assertThatThrownBy(() -> get("/nowhere").transformDeferred(retryWithBudget(policy())).block(Duration.ofSeconds(10)))
        .isInstanceOfSatisfying(HttpStatusException.class, e -> assertThat(e.status()).isEqualTo(404));
    assertThat(requests).hasValue(1);
  }
}
