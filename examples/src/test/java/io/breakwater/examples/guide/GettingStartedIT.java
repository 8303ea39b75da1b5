package io.breakwater.examples.guide;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.LlmStreamClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Exceptions;
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

  /** What the snippet did against a server whose first answer to /flights is a 429 with these headers. */
  private record Outcome(String answer, Throwable error, long endNanos, List<Long> requestNanos) {
    Duration waitBeforeTheRetry() {
      assertThat(requestNanos).as("a 429, then one retry").hasSize(2);
      return Duration.ofNanos(requestNanos.get(1) - requestNanos.get(0));
    }
  }

  private static Outcome flightsAfterA429(Map<String, String> headers) {
    List<Long> requestNanos = new CopyOnWriteArrayList<>();
    DisposableServer limited = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes.get("/flights", (req, res) -> {
          requestNanos.add(System.nanoTime());
          if (requestNanos.size() > 1) {
            return res.sendString(Mono.just("BW123"));
          }
          headers.forEach(res::header);
          return res.status(429).sendString(Mono.just("slow down"));
        }))
        .bindNow();
    try {
      GettingStarted snippet = new GettingStarted(HttpClient.create().host("127.0.0.1").port(limited.port()));
      try {
        String answer = snippet.flights().block(Duration.ofSeconds(15));
        return new Outcome(answer, null, System.nanoTime(), requestNanos);
      } catch (RuntimeException e) {
        return new Outcome(null, e, System.nanoTime(), requestNanos);
      }
    } finally {
      limited.disposeNow();
    }
  }

  /** Issue 35: a server that never answers ends the call with the deadline's TimeoutException, before the deadline. */
  @Test
  void aStalledServerEndsInATimeoutExceptionWithItsAttempts() {
    AtomicInteger requests = new AtomicInteger();
    DisposableServer stalled = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes.get("/flights", (req, res) -> {
          requests.incrementAndGet();
          return Mono.never();
        }))
        .bindNow();
    try {
      GettingStarted snippet = new GettingStarted(HttpClient.create().host("127.0.0.1").port(stalled.port()));
      long start = System.nanoTime();
      Throwable error = Exceptions.unwrap(assertThrows(RuntimeException.class,
          () -> snippet.flights().block(Duration.ofSeconds(15))));
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      assertThat(error).isInstanceOf(TimeoutException.class).isInstanceOf(DeadlineExceededException.class);
      assertThat(error.getSuppressed()).as("each attempt's per-call timeout").hasSize(requests.get())
          .allMatch(CallTimeoutException.class::isInstance);
      assertThat(requests.get()).as("no attempt with less than a second left").isBetween(2, 3);
      assertThat(took).as("ended by the 10 s deadline").isLessThan(Duration.ofMillis(10_500));
    } finally {
      stalled.disposeNow();
    }
  }

  @Test
  void aRateLimitWaitsItsRetryAfterBeforeTheRetry() {
    Outcome outcome = flightsAfterA429(Map.of("Retry-After", "1"));

    assertThat(outcome.answer()).isEqualTo("BW123");
    assertThat(outcome.waitBeforeTheRetry()).isBetween(Duration.ofSeconds(1), Duration.ofMillis(4_500));
  }

  @Test
  void aRateLimitWithoutRetryAfterWaitsAtLeastFiveSecondsOrFailsAtOnceWhenTheWaitWouldNotFit() {
    // the wait is 5 s + full jitter on a 5 s base; the deadline has 10 s: a wait that leaves no time for the
    // attempt is not slept through, the call fails at once
    Outcome outcome = flightsAfterA429(Map.of());

    if (outcome.error() == null) {
      assertThat(outcome.answer()).isEqualTo("BW123");
      assertThat(outcome.waitBeforeTheRetry()).isBetween(Duration.ofSeconds(5), Duration.ofSeconds(10));
    } else {
      assertThat(Exceptions.unwrap(outcome.error())).as("the deadline ends it: a TimeoutException")
          .isInstanceOf(DeadlineExceededException.class).hasMessageContaining("gave up after 1 attempt");
      assertThat(outcome.requestNanos()).hasSize(1);
      assertThat(Duration.ofNanos(outcome.endNanos() - outcome.requestNanos().get(0))).as("after the 429")
          .isLessThan(Duration.ofSeconds(1));
    }
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
