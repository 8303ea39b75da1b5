package io.breakwater.examples.travel;

import io.breakwater.deadline.DeadlineHeader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The travel agent's tools, served on loopback with the faults that break agents in production, each scripted to
 * happen once:
 *
 * <ul>
 *   <li>{@code GET /flights}: the first request stalls for 28 s; later ones answer at once.</li>
 *   <li>{@code GET /hotels}: the first request is rate limited, {@code 429} with {@code Retry-After: 1}.</li>
 *   <li>{@code GET /attractions}: a burst of {@code 503}s that outlasts any sensible retry.</li>
 *   <li>{@code POST /payments}: charges a deposit; counts charges per {@code Idempotency-Key} header, so a duplicated
 *       payment attempt shows.</li>
 * </ul>
 *
 * <p>It records the {@link DeadlineHeader#DEFAULT_NAME} header of every request, so a test can see the time a client
 * gave the server.
 */
public final class ScriptedToolServer implements AutoCloseable {

  private final AtomicInteger flightRequests = new AtomicInteger();
  private final AtomicInteger hotelRequests = new AtomicInteger();
  private final AtomicInteger attractionRequests = new AtomicInteger();
  private final AtomicInteger paymentRequests = new AtomicInteger();
  private final AtomicInteger stalledRequestsCancelled = new AtomicInteger();
  private final Map<String, AtomicInteger> chargesByKey = new ConcurrentHashMap<>();
  private final List<String> deadlineHeaders = new CopyOnWriteArrayList<>();
  private final DisposableServer server;

  public ScriptedToolServer() {
    server = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes
            .get("/flights", (req, res) -> flights(recorded(req, res)))
            .get("/hotels", (req, res) -> hotels(recorded(req, res)))
            .get("/attractions", (req, res) -> attractions(recorded(req, res)))
            .post("/payments", (req, res) -> recorded(req, res)
                .sendString(payment(req.requestHeaders().get("Idempotency-Key")))))
        .bindNow();
  }

  private HttpServerResponse recorded(HttpServerRequest req, HttpServerResponse res) {
    String deadline = req.requestHeaders().get(DeadlineHeader.DEFAULT_NAME);
    if (deadline != null) {
      deadlineHeaders.add(deadline);
    }
    return res;
  }

  public int port() {
    return server.port();
  }

  private org.reactivestreams.Publisher<Void> flights(HttpServerResponse res) {
    String body = "[{\"flight\":\"BW123\",\"from\":\"LHR\",\"to\":\"LIS\",\"price\":129},"
        + "{\"flight\":\"BW456\",\"from\":\"LHR\",\"to\":\"LIS\",\"price\":99}]";
    if (flightRequests.incrementAndGet() == 1) {
      return res.sendString(Mono.delay(Duration.ofSeconds(28)).thenReturn(body)
          .doOnCancel(stalledRequestsCancelled::incrementAndGet));
    }
    return json(res, body);
  }

  private org.reactivestreams.Publisher<Void> hotels(HttpServerResponse res) {
    if (hotelRequests.incrementAndGet() == 1) {
      return res.status(429).header("Retry-After", "1").sendString(Mono.just("{\"error\":\"rate limited\"}"));
    }
    return json(res, "[{\"hotel\":\"Casa Breakwater\",\"night\":87},{\"hotel\":\"Tagus View\",\"night\":112}]");
  }

  private org.reactivestreams.Publisher<Void> attractions(HttpServerResponse res) {
    attractionRequests.incrementAndGet();
    return res.status(503).sendString(Mono.just("{\"error\":\"upstream down\"}"));
  }

  private Mono<String> payment(String idempotencyKey) {
    paymentRequests.incrementAndGet();
    String key = idempotencyKey == null ? "none" : idempotencyKey;
    int charges = chargesByKey.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
    return Mono.just("{\"receipt\":\"R-" + Math.abs(key.hashCode() % 10_000) + "\",\"charges\":" + charges + "}");
  }

  private static org.reactivestreams.Publisher<Void> json(HttpServerResponse res, String body) {
    return res.header("Content-Type", "application/json")
        .sendByteArray(Mono.just(body.getBytes(StandardCharsets.UTF_8)));
  }

  public int flightRequests() {
    return flightRequests.get();
  }

  public int hotelRequests() {
    return hotelRequests.get();
  }

  public int attractionRequests() {
    return attractionRequests.get();
  }

  public int paymentRequests() {
    return paymentRequests.get();
  }

  public int stalledRequestsCancelled() {
    return stalledRequestsCancelled.get();
  }

  /** The {@link DeadlineHeader#DEFAULT_NAME} values received, in arrival order (requests without one are left out). */
  public List<String> deadlineHeaders() {
    return List.copyOf(deadlineHeaders);
  }

  /** Charges made with the {@code Idempotency-Key} header {@code key}. */
  public int chargesFor(String key) {
    AtomicInteger charges = chargesByKey.get(key);
    return charges == null ? 0 : charges.get();
  }

  /** The {@code Idempotency-Key} header values the payment API received, each once. */
  public Set<String> idempotencyKeys() {
    return Set.copyOf(chargesByKey.keySet());
  }

  /** Charges made, summed over all idempotency keys. */
  public int charges() {
    return chargesByKey.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  @Override
  public void close() {
    server.disposeNow();
  }
}
