package io.breakwater.examples.guide;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/**
 * Issue 35: the getting-started snippet, exactly as printed, called once per request (it builds its retry policy
 * inline, per call), bounds retries per dependency: 40 concurrent calls to a server that always answers 503 send at
 * most 60 requests (160 when each call's policy had a budget of its own). It uses up the process's "default" retry
 * budget, so it runs in a JVM of its own.
 */
class InlineRetryBudgetOwnJvmIT {

  @Test
  void fortyConcurrentCallsOfTheSnippetToADeadServerSendAtMostSixtyRequests() {
    AtomicInteger requests = new AtomicInteger();
    DisposableServer dead = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes.get("/flights", (req, res) -> {
          requests.incrementAndGet();
          return res.status(503).sendString(Mono.just("down"));
        }))
        .bindNow();
    try {
      HttpClient http = HttpClient.create().host("127.0.0.1").port(dead.port());
      CircuitBreaker breaker = CircuitBreaker.ofDefaults("flights");
      AtomicInteger failed = new AtomicInteger();
      Flux.range(0, 40)
          .flatMap(i -> GettingStarted.flights(http, breaker).onErrorResume(e -> {
            failed.incrementAndGet();
            return Mono.empty();
          }), 40)
          .blockLast(Duration.ofSeconds(30));
      assertThat(failed).as("every call fails: the server is down").hasValue(40);
      assertThat(requests.get()).as("40 first attempts and the dependency's budget of retries").isBetween(40, 60);
    } finally {
      dead.disposeNow();
    }
  }
}
