package io.breakwater.spring.webflux;

import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.sideEffect;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.http.IdempotencyKeyHeader;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryPolicy;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.tcp.TcpServer;

/** A real WebClient with the filter against loopback servers that answer statuses, stall and break off. */
class BreakwaterExchangeFilterIT {

  /** The idempotency policy of the calls: a known secret, so the expected header value can be computed. */
  private final IdempotencyPolicy policy = IdempotencyPolicy.builder(IdempotencyStore.inMemory())
      .keySecret(new byte[32]).build();

  private DisposableServer server;
  private final List<HttpServerRequest> requests = new CopyOnWriteArrayList<>();
  private final List<Long> requestTimes = new CopyOnWriteArrayList<>();
  private final AtomicLong bytesSent = new AtomicLong();
  private final CountDownLatch connectionClosed = new CountDownLatch(1);

  @AfterEach
  void stop() {
    if (server != null) {
      server.disposeNow();
    }
  }

  private WebClient serve(BiFunction<Integer, HttpServerResponse, Publisher<Void>> answer) {
    AtomicInteger count = new AtomicInteger();
    server = HttpServer.create().host("127.0.0.1").port(0)
        .doOnConnection(c -> c.onDispose(connectionClosed::countDown))
        .handle((req, res) -> {
          requests.add(req);
          requestTimes.add(System.nanoTime());
          return answer.apply(count.incrementAndGet(), res);
        })
        .bindNow();
    return WebClient.builder().baseUrl("http://127.0.0.1:" + server.port())
        .filter(BreakwaterExchangeFilter.create()).build();
  }

  private static String header(HttpServerRequest request, String name) {
    return request.requestHeaders().get(name);
  }

  @Test
  void anErrorStatusFailsWithItsStatusItsHeadersAndAnExcerptOfTheBody() {
    WebClient http = serve((n, res) -> res.status(429).header("Retry-After", "7")
        .header("x-ratelimit-remaining-requests", "0").sendString(Mono.just("slow down")));

    assertThatThrownBy(() -> http.get().uri("/weather").retrieve().bodyToMono(String.class)
        .block(Duration.ofSeconds(5)))
        .isInstanceOfSatisfying(HttpStatusException.class, e -> {
          assertThat(e.status()).isEqualTo(429);
          assertThat(e.header("retry-after")).contains("7");
          assertThat(e.header("X-RateLimit-Remaining-Requests")).contains("0");
          assertThat(e.getMessage()).isEqualTo("HTTP 429: slow down");
          assertThat(FailureClassifier.defaults().classify(e)).isEqualTo(FailureKind.RATE_LIMITED);
        });
  }

  @Test
  void exchangeToMonoSeesTheSameExceptionAsRetrieve() {
    WebClient http = serve((n, res) -> res.status(503).sendString(Mono.just("down")));

    assertThatThrownBy(() -> http.get().uri("/").exchangeToMono(r -> r.bodyToMono(String.class))
        .block(Duration.ofSeconds(5)))
        .isInstanceOfSatisfying(HttpStatusException.class, e -> assertThat(e.status()).isEqualTo(503));
  }

  @Test
  void aSuccessfulAnswerPassesUntouched() {
    WebClient http = serve((n, res) -> res.sendString(Mono.just("sunny")));

    assertThat(http.get().uri("/weather").retrieve().bodyToMono(String.class).block(Duration.ofSeconds(5)))
        .isEqualTo("sunny");
    assertThat(header(requests.get(0), DeadlineHeader.DEFAULT_NAME)).isNull();
    assertThat(header(requests.get(0), IdempotencyKeyHeader.DEFAULT_NAME)).isNull();
  }

  @Test
  void aHugeErrorBodyIsReadOnlyUpToTheExcerptBoundAndItsConnectionClosed() throws InterruptedException {
    byte[] chunk = new byte[64 * 1024];
    Arrays.fill(chunk, (byte) 'x');
    Flux<ByteBuf> endless = Flux.<ByteBuf>generate(sink -> sink.next(Unpooled.wrappedBuffer(chunk)))
        .doOnNext(b -> bytesSent.addAndGet(chunk.length))
        .take(4096);   // 256 MiB at most
    WebClient http = serve((n, res) -> res.status(500).send(endless));

    assertThatThrownBy(() -> http.get().uri("/").retrieve().bodyToMono(String.class).block(Duration.ofSeconds(10)))
        .isInstanceOfSatisfying(HttpStatusException.class, e -> {
          assertThat(e.status()).isEqualTo(500);
          assertThat(e.getMessage()).hasSizeLessThan(300).endsWith("…");
        });
    assertThat(connectionClosed.await(5, TimeUnit.SECONDS)).as("connection closed by the client").isTrue();
    assertThat(bytesSent.get()).isLessThan(64L * 1024 * 1024);
  }

  @Test
  void anErrorExcerptHasItsControlCharactersEscapedAndItsSecretsMasked() {
    WebClient http = serve((n, res) -> res.status(401)
        .sendString(Mono.just("{\"token\": \"sk-live-123456\"}\r\nINFO forged log line")));

    assertThatThrownBy(() -> http.get().uri("/").retrieve().bodyToMono(String.class).block(Duration.ofSeconds(5)))
        .isInstanceOfSatisfying(HttpStatusException.class, e -> assertThat(e.getMessage())
            .doesNotContain("sk-live-123456")
            .doesNotContain("\r").doesNotContain("\n")
            .contains("\\r\\nINFO forged log line"));
  }

  @Test
  void anErrorWhoseBodyBreaksOffStillFailsWithItsStatusAndHeaders() {
    server = TcpServer.create().host("127.0.0.1").port(0)
        .handle((in, out) -> in.receive().take(1).then(out.sendString(Mono.just("HTTP/1.1 429 Too Many Requests\r\n"
            + "Retry-After: 3\r\nContent-Length: 1000\r\n\r\nslow down")).then()))
        .bindNow();
    WebClient http = WebClient.builder().baseUrl("http://127.0.0.1:" + server.port())
        .filter(BreakwaterExchangeFilter.create()).build();

    assertThatThrownBy(() -> http.get().uri("/").retrieve().bodyToMono(String.class).block(Duration.ofSeconds(5)))
        .isInstanceOfSatisfying(HttpStatusException.class, e -> {
          assertThat(e.status()).isEqualTo(429);
          assertThat(e.header("Retry-After")).contains("3");
        });
  }

  @Test
  void aRateLimitIsRetriedAfterItsRetryAfterAndEachAttemptSendsItsOwnTimeLeft() {
    WebClient http = serve((n, res) -> n == 1
        ? res.status(429).header("Retry-After", "1").sendString(Mono.just("slow down"))
        : res.sendString(Mono.just("BW123")));

    String answer = http.get().uri("/flights").retrieve().bodyToMono(String.class)
        .transformDeferred(perCallTimeout())
        .transformDeferred(retryWithBudget(Backoff.fullJitter(Duration.ofMillis(10), Duration.ofMillis(20))))
        .transformDeferred(withDeadline(Duration.ofSeconds(10)))
        .block(Duration.ofSeconds(15));

    assertThat(answer).isEqualTo("BW123");
    assertThat(requests).hasSize(2);
    assertThat(Duration.ofNanos(requestTimes.get(1) - requestTimes.get(0))).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
    long first = DeadlineHeader.parse(header(requests.get(0), DeadlineHeader.DEFAULT_NAME));
    long second = DeadlineHeader.parse(header(requests.get(1), DeadlineHeader.DEFAULT_NAME));
    // per-call budget: min(remaining × 0.6, 12 s) of a 10 s task, then of what is left after the wait
    assertThat(Duration.ofNanos(first)).isBetween(Duration.ofSeconds(5), Duration.ofSeconds(6));
    assertThat(second).isLessThan(first);
  }

  @Test
  void everyAttemptOfAnIdempotentWriteCarriesTheKey() {
    WebClient http = serve((n, res) -> n == 1
        ? res.status(503).sendString(Mono.just("busy"))
        : res.sendString(Mono.just("receipt-1")));
    IdempotencyKey key = IdempotencyKey.explicit("payments.charge", "order-42", Map.of("amount", 10));
    RetryPolicy retry = RetryPolicy.builder().maxRetries(2)
        .backoff(Backoff.fullJitter(Duration.ofMillis(10), Duration.ofMillis(20))).build();

    String receipt = http.post().uri("/charges").bodyValue("{}").retrieve().bodyToMono(String.class)
        .transformDeferred(retryWithBudget(retry))
        .transformDeferred(idempotentBy(key, policy, String.class))
        .transformDeferred(sideEffect(SideEffect.DEDUPLICATED_WRITE))   // retried after a 503: the key went out
        .block(Duration.ofSeconds(10));

    assertThat(receipt).isEqualTo("receipt-1");
    assertThat(requests).extracting(r -> header(r, "Idempotency-Key"))
        .containsExactly(policy.sentKey(key), policy.sentKey(key));
  }

  /**
   * Issue 36 (security 4): the key named the tenant and carried an unkeyed SHA-256 of the arguments, from which a
   * 4-digit PIN was recovered with 10 000 hashes; only its keyed form goes out now.
   */
  @Test
  void thePlainKeyNeverLeavesTheProcessOnlyItsKeyedForm() {
    WebClient http = serve((n, res) -> res.sendString(Mono.just("ok")));
    IdempotencyKey key = IdempotencyKey.builder("bank.transfer").namespace("acme-bank")
        .args(Map.of("pin", "1234", "to", "DE02")).build();

    http.post().uri("/transfers").retrieve().bodyToMono(String.class)
        .transformDeferred(idempotentBy(key, policy, String.class))
        .block(Duration.ofSeconds(5));

    assertThat(header(requests.get(0), "Idempotency-Key")).isEqualTo(policy.sentKey(key)).matches("[0-9a-f]{64}")
        .doesNotContain("acme-bank").doesNotContain("bank.transfer").doesNotContain(key.fingerprint());
  }

  @Test
  void aKeyHostThatIsNotAHostNameIsRefusedSayingWhatToGive() {
    for (String bad : List.of("https://api.stripe.com", "api.stripe.com:443", "api.stripe.com/v1", "*.stripe.com",
        "", " api.stripe.com", ".stripe.com")) {
      assertThatThrownBy(() -> BreakwaterExchangeFilter.builder().idempotencyKeyHosts(List.of(bad)))
          .as(bad).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("is not a host name: give the host only");
    }
    assertThat(BreakwaterExchangeFilter.builder()
        .idempotencyKeyHosts(List.of("api.stripe.com", "10.0.0.7", "[::1]", "my_host.internal")).build()).isNotNull();
  }

  /** Issue 36 (security 4): the key goes only to the hosts it was given for, compared without case. */
  @Test
  void theIdempotencyKeyGoesOnlyToTheHostsItIsGivenFor() {
    server = HttpServer.create().host("127.0.0.1").port(0)
        .handle((req, res) -> {
          requests.add(req);
          return res.sendString(Mono.just("ok"));
        })
        .bindNow();
    for (List<String> hosts : List.of(List.of("127.0.0.1"), List.of("API.EXAMPLE.COM"), List.<String>of())) {
      WebClient http = WebClient.builder().baseUrl("http://127.0.0.1:" + server.port())
          .filter(BreakwaterExchangeFilter.builder().idempotencyKeyHosts(hosts).build()).build();
      AtomicInteger marked = new AtomicInteger();
      http.post().uri("/charges").retrieve().bodyToMono(String.class)
          .transformDeferred(call -> Mono.deferContextual(ctx -> call.doOnSuccess(ok ->
              marked.set(io.breakwater.idempotency.IdempotencyContext.current(ctx).orElseThrow().keysSent()))))
          .transformDeferred(idempotentBy(IdempotencyKey.explicit("payments.charge", "order-" + hosts, 1), policy,
              String.class))
          .block(Duration.ofSeconds(5));
      boolean sent = hosts.contains("127.0.0.1");
      assertThat(header(requests.get(requests.size() - 1), "Idempotency-Key")).as("hosts %s", hosts)
          .isEqualTo(sent ? policy.sentKey(IdempotencyKey.explicit("payments.charge", "order-" + hosts, 1)) : null);
      assertThat(marked).as("the attempt is marked as having sent the key only when it did").hasValue(sent ? 1 : 0);
    }
  }

  @Test
  void aHeaderTheRequestAlreadyHasIsLeftAsItIs() {
    WebClient http = serve((n, res) -> res.sendString(Mono.just("ok")));
    IdempotencyKey key = IdempotencyKey.explicit("payments.charge", "order-42", Map.of("amount", 10));

    http.post().uri("/charges").header("Idempotency-Key", "order-42").header(DeadlineHeader.DEFAULT_NAME, "1S")
        .retrieve().bodyToMono(String.class)
        .transformDeferred(idempotentBy(key, IdempotencyStore.inMemory(), String.class))
        .transformDeferred(withDeadline(Duration.ofSeconds(10)))
        .block(Duration.ofSeconds(5));

    assertThat(header(requests.get(0), "Idempotency-Key")).isEqualTo("order-42");
    assertThat(header(requests.get(0), DeadlineHeader.DEFAULT_NAME)).isEqualTo("1S");
  }

  @Test
  void headersCanBeGivenOtherNames() {
    server = HttpServer.create().host("127.0.0.1").port(0)
        .handle((req, res) -> {
          requests.add(req);
          return res.sendString(Mono.just("ok"));
        })
        .bindNow();
    WebClient http = WebClient.builder().baseUrl("http://127.0.0.1:" + server.port())
        .filter(BreakwaterExchangeFilter.builder()
            .deadlineHeader(DeadlineHeader.named("grpc-timeout"))
            .idempotencyKeyHeader(IdempotencyKeyHeader.named("X-Request-Key"))
            .build())
        .build();
    IdempotencyKey key = IdempotencyKey.explicit("t", "k", Map.of());

    http.get().uri("/").retrieve().bodyToMono(String.class)
        .transformDeferred(idempotentBy(key, policy, String.class))
        .transformDeferred(withDeadline(Duration.ofSeconds(10)))
        .block(Duration.ofSeconds(5));

    assertThat(header(requests.get(0), "grpc-timeout")).isNotNull();
    assertThat(header(requests.get(0), "X-Request-Key")).isEqualTo(policy.sentKey(key));
  }
}
