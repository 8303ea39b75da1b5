package io.breakwater.http;

import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.sideEffect;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/** A loopback payment API records the header of every attempt. */
class IdempotencyKeyHeaderIT {

  private final List<String> received = new CopyOnWriteArrayList<>();
  private final DisposableServer server = HttpServer.create().host("127.0.0.1").port(0)
      .handle((req, res) -> {
        received.add(String.valueOf(req.requestHeaders().get("Idempotency-Key")));
        return received.size() == 1
            ? res.status(503).sendString(Mono.just("busy"))   // the first attempt fails: a retry follows
            : res.sendString(Mono.just("receipt-1"));
      })
      .bindNow();
  private final HttpClient client = IdempotencyKeyHeader.standard()
      .sendOn(HttpClient.create().host("127.0.0.1").port(server.port()).disableRetry(true));

  @AfterEach
  void stop() {
    server.disposeNow();
  }

  /** A write the API deduplicates on the key: retried after a 503 because the key went out with the attempt. */
  @Test
  void everyAttemptOfAnIdempotentWriteCarriesTheKey() {
    IdempotencyKey key = IdempotencyKey.explicit("payments.charge", "order-42", Map.of("amount", 10));
    IdempotencyPolicy policy = IdempotencyPolicy.builder(IdempotencyStore.inMemory()).keySecret(new byte[32]).build();
    RetryPolicy retry = RetryPolicy.builder().maxRetries(2)
        .backoff(Backoff.fullJitter(Duration.ofMillis(10), Duration.ofMillis(20))).build();

    String receipt = HttpResponses.bodyAsString(client.post().uri("/charges"))
        .transformDeferred(retryWithBudget(retry))
        .transformDeferred(idempotentBy(key, policy, String.class))
        .transformDeferred(sideEffect(SideEffect.DEDUPLICATED_WRITE))
        .block(Duration.ofSeconds(10));

    assertThat(receipt).isEqualTo("receipt-1");
    assertThat(received).containsExactly(policy.sentKey(key), policy.sentKey(key));
  }

  @Test
  void aCallOutsideIdempotentBySendsNoKey() {
    received.add("(first)");   // the server answers this call at once

    assertThat(HttpResponses.bodyAsString(client.get().uri("/receipts")).block(Duration.ofSeconds(5)))
        .isEqualTo("receipt-1");
    assertThat(received).containsExactly("(first)", "null");
  }
}
