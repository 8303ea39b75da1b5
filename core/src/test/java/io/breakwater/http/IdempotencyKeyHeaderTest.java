package io.breakwater.http;

import static io.breakwater.Breakwater.idempotentBy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyStore;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

class IdempotencyKeyHeaderTest {

  private final IdempotencyKeyHeader header = IdempotencyKeyHeader.standard();

  private Mono<String> valueSeenByTheCall() {
    return Mono.deferContextual(ctx -> Mono.just(header.value(ctx).orElse("(no header)")));
  }

  @Test
  void insideIdempotentByTheKeyInForceIsTheValue() {
    IdempotencyKey key = IdempotencyKey.explicit("payments.refund", "order-42", Map.of("amount", 10));

    String seen = valueSeenByTheCall()
        .transformDeferred(idempotentBy(key, IdempotencyStore.inMemory(), String.class))
        .block(Duration.ofSeconds(5));

    assertThat(seen).isEqualTo("default:payments.refund:key:order-42").isEqualTo(key.value());
  }

  @Test
  void outsideIdempotentByThereIsNoValue() {
    assertThat(valueSeenByTheCall().block(Duration.ofSeconds(5))).isEqualTo("(no header)");
  }

  @Test
  void aKeyThatAHeaderCannotCarryIsPercentEncodedSoItCanNeitherBreakNorForgeAHeader() {
    assertThat(IdempotencyKeyHeader.encode("default:t:key:order 42\r\nX-Admin: 1"))
        .isEqualTo("default:t:key:order%2042%0D%0AX-Admin:%201");
    assertThat(IdempotencyKeyHeader.encode("default:t:key:Zürich")).isEqualTo("default:t:key:Z%C3%BCrich");
    assertThat(IdempotencyKeyHeader.encode("default:t:key:100%")).isEqualTo("default:t:key:100%25");
    assertThat(IdempotencyKeyHeader.encode("default:t:sha256:0af3")).isEqualTo("default:t:sha256:0af3");
  }

  @Test
  void aKeyMadeOnlyOfCharactersAHeaderCannotCarryIsEncodedWhole() {
    assertThat(IdempotencyKeyHeader.encode("%")).isEqualTo("%25");
    assertThat(IdempotencyKeyHeader.encode("%%")).isEqualTo("%25%25");
    assertThat(IdempotencyKeyHeader.encode("\r\n")).isEqualTo("%0D%0A");
    assertThat(IdempotencyKeyHeader.encode("ü")).isEqualTo("%C3%BC");
  }

  @Test
  void visibleAsciiEndsExactlyAtExclamationMarkAndTilde() {
    assertThat(IdempotencyKeyHeader.encode("!~")).isEqualTo("!~");
    assertThat(IdempotencyKeyHeader.encode("!~ \u007f")).isEqualTo("!~%20%7F");
  }

  @Test
  void encodingIsOneToOneSoTwoKeysNeverShareAValue() {
    assertThat(IdempotencyKeyHeader.encode("a%20b")).isNotEqualTo(IdempotencyKeyHeader.encode("a b"));
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
      IdempotencyKey key = IdempotencyKey.explicit("payments.refund", "order 42", Map.of("amount", 10));

      String received = HttpResponses.bodyAsString(client.post().uri("/refunds"))
          .transformDeferred(idempotentBy(key, IdempotencyStore.inMemory(), String.class))
          .block(Duration.ofSeconds(5));

      assertThat(received).isEqualTo("default:payments.refund:key:order%2042");
    } finally {
      echo.disposeNow();
    }
  }
}
