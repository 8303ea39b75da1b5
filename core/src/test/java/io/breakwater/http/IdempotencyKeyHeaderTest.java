package io.breakwater.http;

import static io.breakwater.Breakwater.idempotentBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

class IdempotencyKeyHeaderTest {

  private static final byte[] SECRET = new byte[32];

  private final IdempotencyKeyHeader header = IdempotencyKeyHeader.standard();

  /** A policy of an instance of its own (its own store) with {@code secret}. */
  private static IdempotencyPolicy policy(byte[] secret) {
    return IdempotencyPolicy.builder(IdempotencyStore.inMemory()).keySecret(secret).build();
  }

  private Mono<String> valueSeenByTheCall() {
    return Mono.deferContextual(ctx -> Mono.just(header.value(ctx).orElse("(no header)")));
  }

  @Test
  void insideIdempotentByTheValueIsTheKeysKeyedFormNeverThePlainKey() {
    IdempotencyKey key = IdempotencyKey.explicit("acme-bank", "bank.transfer", "order-42", Map.of("amount", 10));

    String seen = valueSeenByTheCall()
        .transformDeferred(idempotentBy(key, policy(SECRET), String.class))
        .block(Duration.ofSeconds(5));

    assertThat(seen).isEqualTo(policy(SECRET).sentKey(key)).matches("[0-9a-f]{64}")
        .doesNotContain("acme-bank").doesNotContain("bank.transfer").doesNotContain("order-42")
        .isNotEqualTo(key.value());
  }

  @Test
  void outsideIdempotentByThereIsNoValue() {
    assertThat(valueSeenByTheCall().block(Duration.ofSeconds(5))).isEqualTo("(no header)");
  }

  /**
   * The attack of the security review: the plain key carried an unkeyed SHA-256 of the arguments, and a 4-digit PIN
   * was found among 10 000 hashes. Without the secret no guess of the arguments reproduces what is sent.
   */
  @Test
  void aLowEntropyArgumentCannotBeRecoveredFromTheSentValueByHashingEveryGuess() {
    IdempotencyKey transfer = IdempotencyKey.builder("bank.transfer").namespace("acme-bank")
        .args(Map.of("pin", "1234", "to", "DE02")).build();
    String sent = valueSeenByTheCall().transformDeferred(idempotentBy(transfer, policy(SECRET), String.class))
        .block(Duration.ofSeconds(5));

    for (int pin = 0; pin < 10_000; pin++) {
      IdempotencyKey guess = IdempotencyKey.builder("bank.transfer").namespace("acme-bank")
          .args(Map.of("pin", String.format("%04d", pin), "to", "DE02")).build();
      assertThat(sent).as("guess %04d", pin).doesNotContain(guess.fingerprint()).isNotEqualTo(guess.value());
    }
  }

  @Test
  void twoInstancesWithTheSameSecretSendTheSameValueAndAnotherSecretAnother() {
    IdempotencyKey key = IdempotencyKey.explicit("payments.refund", "order-42", Map.of("amount", 10));
    byte[] otherSecret = new byte[32];
    otherSecret[0] = 1;

    String first = valueSeenByTheCall().transformDeferred(idempotentBy(key, policy(SECRET), String.class))
        .block(Duration.ofSeconds(5));
    String second = valueSeenByTheCall().transformDeferred(idempotentBy(key, policy(SECRET.clone()), String.class))
        .block(Duration.ofSeconds(5));
    String otherDeployment = valueSeenByTheCall()
        .transformDeferred(idempotentBy(key, policy(otherSecret), String.class)).block(Duration.ofSeconds(5));

    assertThat(second).as("another instance, its own store, the same secret").isEqualTo(first);
    assertThat(otherDeployment).isNotEqualTo(first);
  }

  @Test
  void theSentValueIsNeitherTheStoreKeysHashNorTheTag() {
    IdempotencyKey key = IdempotencyKey.explicit("payments.refund", "order-42", Map.of("amount", 10));
    IdempotencyPolicy policy = policy(SECRET);

    assertThat(policy.storeKey(key)).doesNotContain(policy.sentKey(key));
    assertThat(policy.tag(key)).doesNotContain(policy.sentKey(key).substring(0, 8));
  }

  @Test
  void aHeaderNameMustBeAnHttpToken() {
    assertThat(IdempotencyKeyHeader.named("X-Idempotency-Key").name()).isEqualTo("X-Idempotency-Key");
    for (String bad : new String[] {"", "Idempotency Key", "Key:", "Key\r\nX-Admin", "Schlüssel"}) {
      assertThatIllegalArgumentException().as(bad).isThrownBy(() -> IdempotencyKeyHeader.named(bad))
          .withMessageContaining("is not an HTTP header name");
    }
  }

  @Test
  void everyTokenSymbolMayStandInAHeaderName() {
    assertThat(IdempotencyKeyHeader.named("!#$%&'*+-.^_`|~").name()).isEqualTo("!#$%&'*+-.^_`|~");
  }

  @Test
  void aClientSendsTheKeyInForceUnderTheHeaderNameItWasGiven() {
    DisposableServer echo = HttpServer.create().host("127.0.0.1").port(0)
        .handle((req, res) -> res.sendString(Mono.just(String.valueOf(req.requestHeaders().get("X-Idempotency-Key")))))
        .bindNow();
    try {
      HttpClient client = IdempotencyKeyHeader.named("X-Idempotency-Key")
          .sendOn(HttpClient.create().host("127.0.0.1").port(echo.port()).disableRetry(true));
      IdempotencyKey key = IdempotencyKey.explicit("payments.refund", "order 42 Zürich", Map.of("amount", 10));

      String received = HttpResponses.bodyAsString(client.post().uri("/refunds"))
          .transformDeferred(idempotentBy(key, policy(SECRET), String.class))
          .block(Duration.ofSeconds(5));

      assertThat(received).as("a client key a header cannot carry goes out as hex digits only")
          .isEqualTo(policy(SECRET).sentKey(key)).matches("[0-9a-f]{64}");
    } finally {
      echo.disposeNow();
    }
  }
}
