package io.breakwater.benchmarks.load;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The load harness's server, run in its own JVM so that its CPU is not the client's: an OpenAI-compatible streaming
 * endpoint and a tool endpoint on loopback, each scripted by request headers, and a control port that reports what
 * the server saw. Prints {@code PORTS <data> <control>} on stdout once bound, and exits when stdin closes (so it dies
 * with the harness).
 *
 * <p>Scripts, by the {@code X-Load} header ({@code key=value;...}) on {@code POST /v1/chat/completions}:
 * {@code mode} = {@code healthy} (default), {@code stall} (after {@code stallAfter} tokens, only silence),
 * {@code heartbeat} (only {@code : ping} comments), {@code 5xx} (503), {@code 429} (with {@code Retry-After: 1});
 * {@code tokens}, {@code gapMs} between tokens, {@code firstMs} before the first, {@code firstStallPct} (the share of
 * requests that send headers and then nothing), {@code failPct} (the share of requests answered 503). On
 * {@code POST /tool}: {@code latencyMs}, {@code failPct} (503s), {@code stallPct} (requests never answered, until the
 * client gives up).
 */
public final class LoadServer {

  private final Map<String, LongAdder> requests = new ConcurrentHashMap<>();
  private final AtomicInteger openConnections = new AtomicInteger();
  private final LongAdder cancelledByClient = new LongAdder();

  public static void main(String[] args) throws Exception {
    LoadServer server = new LoadServer();
    DisposableServer data = HttpServer.create().host("127.0.0.1").port(0)
        .doOnConnection(conn -> {
          server.openConnections.incrementAndGet();
          conn.onDispose(server.openConnections::decrementAndGet);
        })
        .route(routes -> routes
            .post("/v1/chat/completions", server::stream)
            .post("/tool", server::tool))
        .bindNow();
    DisposableServer control = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes
            .get("/stats", (req, res) -> res.header("Content-Type", "application/json").sendString(
                Mono.fromSupplier(server::statsJson)))
            .post("/reset", (req, res) -> {
              server.requests.clear();
              server.cancelledByClient.reset();
              return res.send();
            }))
        .bindNow();
    System.out.println("PORTS " + data.port() + " " + control.port());
    System.out.flush();
    while (System.in.read() >= 0) {
      // the harness holds stdin open; EOF means it is gone
    }
    data.disposeNow();
    control.disposeNow();
  }

  private String statsJson() {
    String counts = requests.entrySet().stream()
        .map(e -> "\"" + e.getKey() + "\":" + e.getValue().sum())
        .collect(Collectors.joining(","));
    return "{\"open\":" + openConnections.get() + ",\"cancelled\":" + cancelledByClient.sum()
        + ",\"requests\":{" + counts + "}}";
  }

  private void count(String what) {
    requests.computeIfAbsent(what, k -> new LongAdder()).increment();
  }

  private Mono<Void> stream(HttpServerRequest req, HttpServerResponse res) {
    Script script = Script.parse(req.requestHeaders().get("X-Load"));
    String mode = script.text("mode", "healthy");
    count("stream." + mode);
    Mono<String> body = req.receive().aggregate().asString().defaultIfEmpty("");
    switch (mode) {
      case "5xx":
        return body.then(res.status(503).sendString(Mono.just("{\"error\":{\"message\":\"overloaded\"}}")).then());
      case "429":
        return body.then(res.status(429).header("Retry-After", "1")
            .sendString(Mono.just("{\"error\":{\"message\":\"rate limited\"}}")).then());
      default:
        break;
    }
    Flux<String> events;
    if ("heartbeat".equals(mode)) {
      events = Flux.interval(Duration.ofMillis(script.number("gapMs", 500))).map(i -> ": ping\n\n");
    } else if ("stall".equals(mode)) {
      events = tokens(script, (int) script.number("stallAfter", 3), false).concatWith(Flux.never());
    } else if (ThreadLocalRandom.current().nextInt(100) < script.number("failPct", 0)) {
      count("stream.failed");
      return body.then(res.status(503).sendString(Mono.just("{\"error\":{\"message\":\"overloaded\"}}")).then());
    } else if (ThreadLocalRandom.current().nextInt(100) < script.number("firstStallPct", 0)) {
      count("stream.firstStall");
      events = Flux.never();
    } else {
      events = tokens(script, (int) script.number("tokens", 50), true);
    }
    Flux<String> sent = body.thenMany(events).doOnCancel(cancelledByClient::increment);
    return res.header("Content-Type", "text/event-stream").sendString(sent).then();
  }

  private static Flux<String> tokens(Script script, int count, boolean finish) {
    long gapMs = script.number("gapMs", 20);
    Flux<String> chunks = Flux.range(0, count)
        .map(i -> "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t"
            + i + " \"}}]}\n\n");
    chunks = gapMs > 0 ? chunks.delayElements(Duration.ofMillis(gapMs)) : chunks;
    long firstMs = script.number("firstMs", 0);
    if (firstMs > 0) {
      chunks = chunks.delaySubscription(Duration.ofMillis(firstMs));
    }
    if (!finish) {
      return chunks;
    }
    return chunks.concatWithValues(
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},"
            + "\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n");
  }

  private Mono<Void> tool(HttpServerRequest req, HttpServerResponse res) {
    Script script = Script.parse(req.requestHeaders().get("X-Load"));
    count("tool");
    int draw = ThreadLocalRandom.current().nextInt(1000);
    boolean fail = draw < script.number("failPct", 0) * 10;
    if (!fail && draw < (script.number("failPct", 0) + script.number("stallPct", 0)) * 10) {
      count("tool.stalled");
      return req.receive().then().then(Mono.<Void>never()).doOnCancel(cancelledByClient::increment);
    }
    Mono<Void> answer = fail
        ? res.status(503).sendString(Mono.just("{\"error\":\"unavailable\"}")).then()
        : res.header("Content-Type", "application/json").sendString(Mono.just("{\"ok\":true}")).then();
    long latencyMs = script.number("latencyMs", 5);
    return req.receive().then()
        .then(latencyMs > 0 ? Mono.delay(Duration.ofMillis(latencyMs)).then() : Mono.empty())
        .then(answer)
        .doOnCancel(cancelledByClient::increment);
  }

  /** A request's script: {@code key=value} pairs separated by {@code ;}. */
  record Script(Map<String, String> values) {

    static Script parse(String header) {
      if (header == null || header.isBlank()) {
        return new Script(Map.of());
      }
      Map<String, String> values = new ConcurrentHashMap<>();
      for (String pair : header.split(";")) {
        int eq = pair.indexOf('=');
        if (eq > 0) {
          values.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
        }
      }
      return new Script(values);
    }

    String text(String key, String otherwise) {
      return values.getOrDefault(key, otherwise);
    }

    long number(String key, long otherwise) {
      try {
        return Math.max(0, Math.min(3_600_000L, Long.parseLong(values.getOrDefault(key, "x"))));
      } catch (NumberFormatException absent) {
        return otherwise;
      }
    }
  }
}
