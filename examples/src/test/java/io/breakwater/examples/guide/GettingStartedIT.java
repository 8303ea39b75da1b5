package io.breakwater.examples.guide;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.LlmStreamClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/** The README's and getting started's snippets against a loopback server. */
class GettingStartedIT {

  private static final AtomicInteger flightRequests = new AtomicInteger();
  private static DisposableServer server;
  private static GettingStarted guide;

  @BeforeAll
  static void start() {
    server = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes
            .get("/weather", (req, res) -> res.sendString(Mono.just("sunny")))
            .get("/flights", (req, res) -> flightRequests.incrementAndGet() == 1
                ? res.withConnection(connection -> connection.channel().close()).then()   // a reset connection
                : res.sendString(Mono.just("BW123"))))
        .bindNow();
    guide = new GettingStarted(HttpClient.create().host("127.0.0.1").port(server.port()));
  }

  @AfterAll
  static void stop() {
    server.disposeNow();
  }

  @Test
  void aCallUnderADeadlineAnswers() {
    assertThat(guide.weather().block(Duration.ofSeconds(10))).isEqualTo("sunny");
  }

  @Test
  void aResetConnectionIsRetriedWithinTheDeadline() {
    assertThat(guide.flights().block(Duration.ofSeconds(10))).isEqualTo("BW123");
    assertThat(flightRequests).hasValue(2);
  }

  @Test
  void theAnswerStreamsTokenByToken() {
    try (LoopbackLlm server = new LoopbackLlm(List.of("Lyon ", "in ", "May"))) {
      LlmStreamClient llm = LlmStreamClient.builder(server.baseUrl(), Dialect.OPENAI_CHAT).build();

      List<String> tokens = GettingStarted.tokens(llm, Map.of("model", "m", "messages", List.of()))
          .collectList().block(Duration.ofSeconds(10));

      assertThat(tokens).containsExactly("Lyon ", "in ", "May");
    }
  }
}
