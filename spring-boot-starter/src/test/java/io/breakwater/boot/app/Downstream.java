package io.breakwater.boot.app;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A real loopback HTTP server standing for the third-party API the application calls: {@code /forecast/{city}}
 * answers by the city's name ({@code rate-limited-once}: 429 with {@code Retry-After: 1} on its first request;
 * {@code flaky}: 503 while {@link #failing} is set), and every request is recorded with its headers and when it
 * arrived.
 */
public final class Downstream implements AutoCloseable {

  /** One request as the server saw it. */
  public record Request(String path, Map<String, String> headers, long arrivedNanos) {}

  private final List<Request> requests = new CopyOnWriteArrayList<>();
  private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
  /** While set, {@code /forecast/flaky} answers 503. */
  public final AtomicBoolean failing = new AtomicBoolean();
  private final DisposableServer server;

  private Downstream() {
    server = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes.get("/forecast/{city}", (req, res) -> {
          String city = req.param("city");
          Map<String, String> headers = new ConcurrentHashMap<>();
          req.requestHeaders().forEach(h -> headers.put(h.getKey().toLowerCase(java.util.Locale.ROOT), h.getValue()));
          requests.add(new Request(req.path(), headers, System.nanoTime()));
          int n = counts.computeIfAbsent(city, c -> new AtomicInteger()).incrementAndGet();
          if ("rate-limited-once".equals(city) && n == 1) {
            return res.status(429).header("Retry-After", "1").sendString(Mono.just("slow down"));
          }
          if ("flaky".equals(city) && failing.get()) {
            return res.status(503).sendString(Mono.just("unavailable"));
          }
          if ("stalled".equals(city)) {
            return res.sendString(Mono.delay(Duration.ofSeconds(30)).map(x -> "late"));
          }
          return res.sendString(Mono.just("sunny in " + city));
        }))
        .bindNow();
  }

  public static Downstream start() {
    return new Downstream();
  }

  public String url() {
    return "http://127.0.0.1:" + server.port();
  }

  public List<Request> requests(String city) {
    return requests.stream().filter(r -> r.path().endsWith("/" + city)).toList();
  }

  @Override
  public void close() {
    server.disposeNow();
  }
}
