package io.breakwater.examples.zombies;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A loopback server whose streams never end, and that counts the requests the client walked away from: each request
 * gets its answer's headers, a few tokens, then only heartbeats (an SSE comment every 100 ms) for ever, so a request
 * ends only when the client closes its connection. The server records when each request came and when its connection
 * closed.
 *
 * <p>It speaks OpenAI's chat completions ({@code POST /v1/chat/completions}) for the LLM clients and plain
 * server-sent events ({@code GET /events}) for the HTTP clients. {@link Stall#NO_HEADERS} holds a request without
 * answering at all, as a server that accepted it and went silent.
 */
public final class WalkAwayServer implements AutoCloseable {

  /** Where the stream stalls. */
  public enum Stall {
    /** Nothing at all, not even the headers. */
    NO_HEADERS,
    /** The headers, then heartbeats: before the first token. */
    BEFORE_THE_FIRST_TOKEN,
    /** The headers and two tokens, then heartbeats. */
    AFTER_TWO_TOKENS
  }

  private final Stall stall;
  private final AtomicInteger requests = new AtomicInteger();
  private final List<Long> closedNanos = new CopyOnWriteArrayList<>();
  private final DisposableServer server;

  public WalkAwayServer(Stall stall) {
    this.stall = stall;
    this.server = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes
            .post("/v1/chat/completions", (req, res) -> req.receive().then().thenMany(answer(res, true)))
            .get("/events", (req, res) -> answer(res, false)))
        .bindNow();
  }

  private Publisher<Void> answer(HttpServerResponse res, boolean openAi) {
    requests.incrementAndGet();
    AtomicReference<Scheduler> loop = new AtomicReference<>();
    res.withConnection(connection -> {
      connection.onDispose(() -> closedNanos.add(System.nanoTime()));
      loop.set(Schedulers.fromExecutorService(connection.channel().eventLoop()));
    });
    if (stall == Stall.NO_HEADERS) {
      return Mono.never();
    }
    int tokens = stall == Stall.AFTER_TWO_TOKENS ? 2 : 0;
    Flux<String> body = Flux.range(0, tokens).map(i -> openAi ? chunk("t" + i) : "data: t" + i + "\n\n")
        .concatWith(Flux.interval(Duration.ofMillis(100), loop.get()).map(i -> ": keep-alive\n\n"));
    return res.header("Content-Type", "text/event-stream").sendString(body);
  }

  /** An OpenAI chat completion chunk carrying {@code content}, as the OpenAI Java SDK parses it. */
  public static String chunk(String content) {
    return "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
        + "\"model\":\"local\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + content + "\"},"
        + "\"finish_reason\":null}]}\n\n";
  }

  public String baseUrl() {
    return "http://127.0.0.1:" + server.port();
  }

  public int port() {
    return server.port();
  }

  /** The requests received. */
  public int requests() {
    return requests.get();
  }

  /** When each connection the client walked away from was closed, in {@code System.nanoTime()}. */
  public List<Long> closedNanos() {
    return List.copyOf(closedNanos);
  }

  @Override
  public void close() {
    server.disposeNow();
  }
}
