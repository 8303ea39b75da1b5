package io.breakwater.stream.llm;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A Reactor Netty server on loopback that plays LLM streaming scenarios and records what it sees: requests, their
 * {@code Last-Event-ID} and deadline headers, and when each connection closed.
 */
final class LlmTestServer implements AutoCloseable {

  /** A scenario: the handler for the n-th request (0-based). */
  interface Scenario {
    Publisher<Void> handle(int request, HttpServerRequest req, HttpServerResponse res);
  }

  final List<String> requestLines = new CopyOnWriteArrayList<>();
  final List<String> lastEventIds = new CopyOnWriteArrayList<>();
  final List<String> deadlineHeaders = new CopyOnWriteArrayList<>();
  final List<Long> closedAtNanos = new CopyOnWriteArrayList<>();
  final AtomicInteger requests = new AtomicInteger();
  final AtomicInteger openConnections = new AtomicInteger();
  private volatile Scenario scenario;
  private final DisposableServer server;

  LlmTestServer() {
    BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> handler = (req, res) -> {
      requestLines.add(req.method() + " " + req.uri());
      lastEventIds.add(String.valueOf(req.requestHeaders().get("Last-Event-ID")));
      deadlineHeaders.add(String.valueOf(req.requestHeaders().get("Breakwater-Timeout")));
      int n = requests.getAndIncrement();
      return req.receive().then().thenMany(Flux.defer(() -> Flux.from(scenario.handle(n, req, res))));
    };
    server = HttpServer.create().host("127.0.0.1").port(0)
        .doOnConnection(connection -> {
          openConnections.incrementAndGet();
          connection.onDispose(() -> {
            openConnections.decrementAndGet();
            closedAtNanos.add(System.nanoTime());
          });
        })
        .handle(handler)
        .bindNow();
  }

  LlmTestServer play(Scenario scenario) {
    this.scenario = scenario;
    return this;
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.port();
  }

  @Override
  public void close() {
    server.disposeNow();
  }

  // ---- building blocks ----

  static String openAiToken(String text) {
    return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text + "\"}}]}\n\n";
  }

  static final String OPENAI_ROLE = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
      + "\"content\":\"\"}}]}\n\n";
  static final String OPENAI_DONE = "data: [DONE]\n\n";

  static Publisher<Void> sse(HttpServerResponse res, Flux<String> body) {
    return res.header("Content-Type", "text/event-stream").sendString(body);
  }

  /**
   * Ticks on the connection's own event loop: cancelling them (when the client goes away) then takes no lock, which
   * BlockHound would rightly flag on an event-loop thread.
   */
  static Flux<Long> ticks(HttpServerResponse res, Duration every) {
    AtomicReference<Scheduler> loop = new AtomicReference<>();
    res.withConnection(c -> loop.set(Schedulers.fromExecutorService(c.channel().eventLoop())));
    return Flux.interval(every, every, loop.get());
  }

  /** Tokens t0..t(n-1) every {@code every}, then {@code tail}. */
  static Flux<String> drip(HttpServerResponse res, int n, Duration every, Flux<String> tail) {
    return Flux.just(OPENAI_ROLE)
        .concatWith(ticks(res, every).take(n).map(i -> openAiToken("t" + i)))
        .concatWith(tail);
  }

  /** Sends {@code body}, then drops the connection without ending the response. */
  static Publisher<Void> sseThenDrop(HttpServerResponse res, Flux<String> body) {
    return res.header("Content-Type", "text/event-stream")
        .sendString(body).then()
        .then(Mono.delay(Duration.ofMillis(50)))
        .then(Mono.fromRunnable(() -> res.withConnection(c -> c.channel().close())))
        .then(Mono.never());
  }
}
