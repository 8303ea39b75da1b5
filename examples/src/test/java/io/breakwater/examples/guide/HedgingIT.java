package io.breakwater.examples.guide;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.hedge.HedgePolicy;
import io.breakwater.stream.llm.Dialect;
import io.breakwater.stream.llm.LlmDelta;
import io.breakwater.stream.llm.LlmStreamClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/** First-token hedging of the LLM client against an OpenAI-compatible server on loopback. */
class HedgingIT {

  private final AtomicInteger requests = new AtomicInteger();
  private final AtomicInteger closed = new AtomicInteger();
  private DisposableServer server;

  @AfterEach
  void stop() {
    server.dispose();
  }

  private static String token(String text) {
    return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text + "\"}}]}\n\n";
  }

  /** The first request's first token takes 30 s (a cold replica); later ones stream at once. */
  private String serve() {
    server = HttpServer.create().host("127.0.0.1").port(0)
        .doOnConnection(c -> c.onDispose(closed::incrementAndGet))
        .route(routes -> routes.post("/v1/chat/completions", (req, res) -> {
          int n = requests.getAndIncrement();
          AtomicReference<Scheduler> loop = new AtomicReference<>();
          res.withConnection(c -> loop.set(Schedulers.fromExecutorService(c.channel().eventLoop())));
          Flux<String> body = Mono.delay(n == 0 ? Duration.ofSeconds(30) : Duration.ZERO, loop.get())
              .thenMany(Flux.just(token("replica-" + n), token(" answers"), "data: [DONE]\n\n"));
          return res.header("Content-Type", "text/event-stream")
              .sendString(req.receive().aggregate().asString().defaultIfEmpty("").thenMany(body));
        }))
        .bindNow();
    return "http://127.0.0.1:" + server.port();
  }

  @Test
  void aClientWithAHedgePolicyRacesASecondStreamAndClosesTheSlowOne() throws InterruptedException {
    HedgePolicy firstToken = HedgePolicy.builder().name("llm").delay(Duration.ofMillis(200)).budget(1.0).build();
    LlmStreamClient llm = Hedging.hedgedClient(serve(), firstToken);

    List<LlmDelta> deltas = llm.stream(Map.of("model", "gpt-4o-mini", "messages", List.of()))
        .collectList().block(Duration.ofSeconds(10));

    assertThat(deltas).filteredOn(LlmDelta.Text.class::isInstance).extracting(d -> ((LlmDelta.Text) d).text())
        .containsExactly("replica-1", " answers");
    assertThat(deltas.get(deltas.size() - 1)).as("two requests, one call").isEqualTo(new LlmDelta.Done(2));
    assertThat(requests).hasValue(2);
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (closed.get() < 1 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(closed).as("the slow replica's connection was closed").hasValueGreaterThanOrEqualTo(1);
  }

  @Test
  void aStreamWhoseFirstTokenIsLateIsHedgedAndTheFirstReplicaToAnswerStreamsTheWholeAnswer()
      throws InterruptedException {
    LlmStreamClient llm = LlmStreamClient.builder(serve(), Dialect.OPENAI_CHAT).build();
    HedgePolicy firstToken = HedgePolicy.builder().name("llm").delay(Duration.ofMillis(200)).budget(1.0).build();

    List<String> answer = Hedging.answer(llm, firstToken, "hello").collectList().block(Duration.ofSeconds(10));

    assertThat(answer).containsExactly("replica-1", " answers");
    assertThat(requests).hasValue(2);
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (closed.get() < 1 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(closed).as("the slow replica's connection was closed").hasValueGreaterThanOrEqualTo(1);
  }
}
