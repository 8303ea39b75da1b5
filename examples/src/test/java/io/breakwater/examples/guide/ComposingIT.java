package io.breakwater.examples.guide;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.hedge.HedgePolicy;
import io.breakwater.http.IdempotencyKeyHeader;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/** The snippets of docs/composing.md against loopback servers. */
class ComposingIT {

  @Test
  void theFullStackAnswersAReadAndRetriesA503() {
    AtomicInteger requests = new AtomicInteger();
    DisposableServer server = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes.get("/search", (req, res) -> requests.incrementAndGet() == 1
            ? res.status(503).sendString(Mono.just("busy"))
            : res.sendString(Mono.just("BW123"))))
        .bindNow();
    try {
      HttpClient flights = HttpClient.create().host("127.0.0.1").port(server.port());
      String answer = Composing.search(flights, CircuitBreaker.ofDefaults("composing-flights"),
              ConcurrencyLimit.builder("composing-flights").fixed(4).build(),
              RateLimit.builder("composing-flights").requests(100, Duration.ofSeconds(1)).build(),
              HedgePolicy.builder().name("composing-flights").delay(Duration.ofSeconds(5)).build())
          .block(Duration.ofSeconds(15));
      assertThat(answer).isEqualTo("BW123");
      assertThat(requests).hasValue(2);
    } finally {
      server.disposeNow();
    }
  }

  @Test
  void aDeduplicatedWriteIsRetriedWithTheSameIdempotencyKeyAndRunsOncePerKey() {
    List<String> keys = new CopyOnWriteArrayList<>();
    DisposableServer server = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes.post("/charges", (req, res) -> {
          keys.add(req.requestHeaders().get(IdempotencyKeyHeader.DEFAULT_NAME));
          return keys.size() == 1
              ? res.status(503).sendString(Mono.just("try again"))    // processed or not: the API deduplicates
              : res.sendString(Mono.just("charged"));
        }))
        .bindNow();
    try {
      HttpClient payments = IdempotencyKeyHeader.standard()
          .sendOn(HttpClient.create().host("127.0.0.1").port(server.port()));
      IdempotencyStore store = IdempotencyStore.inMemory();
      assertThat(Composing.charge(payments, store, "order-7", "42.00").block(Duration.ofSeconds(15)))
          .isEqualTo("charged");
      assertThat(Composing.charge(payments, store, "order-7", "42.00").block(Duration.ofSeconds(15)))
          .as("replayed from the store").isEqualTo("charged");
      assertThat(keys).as("one retry after the 503, with the same key; the replay sent nothing").hasSize(2)
          .doesNotContainNull().containsOnly(keys.get(0));
    } finally {
      server.disposeNow();
    }
  }
}
