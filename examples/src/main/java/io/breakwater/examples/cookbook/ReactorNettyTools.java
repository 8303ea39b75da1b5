package io.breakwater.examples.cookbook;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.sideEffect;
import static io.breakwater.Breakwater.streamTimeouts;
import static io.breakwater.Breakwater.withDeadline;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.examples.travel.ScriptedToolServer;
import io.breakwater.examples.travel.TravelAgent.Deposit;
import io.breakwater.http.HttpResponses;
import io.breakwater.http.IdempotencyKeyHeader;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.ServerSentEvent;
import io.breakwater.stream.ServerSentEvents;
import io.breakwater.stream.StreamTimeouts;
import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.ByteBufMono;
import reactor.netty.http.client.HttpClient;

/**
 * Cookbook: agent tools on plain Reactor Netty {@link HttpClient}. No {@code responseTimeout} to guess: each attempt
 * is bounded by its share of the deadline, and when it runs out the request is cancelled and its connection closed,
 * so no zombie request keeps the server busy. The deadline travels to the server with every attempt.
 *
 * <pre>{@code
 * ReactorNettyTools tools = new ReactorNettyTools(ReactorNettyTools.client("localhost", 8080),
 *     CircuitBreaker.ofDefaults("travel"), RetryPolicy.ofDefaults(), IdempotencyStore.inMemory());
 * String flights = tools.get("/flights").block();
 * }</pre>
 */
public final class ReactorNettyTools {

  private final HttpClient http;
  private final CircuitBreaker breaker;
  private final RetryPolicy retry;
  private final IdempotencyStore store;

  public ReactorNettyTools(HttpClient http, CircuitBreaker breaker, RetryPolicy retry, IdempotencyStore store) {
    this.http = http;
    this.breaker = breaker;
    this.retry = retry;
    this.store = store;
  }

  // snippet:cookbook-reactor-netty-client
  public static HttpClient client(String host, int port) {
    HttpClient client = HttpClient.create()
        .host(host)
        .port(port)
        .disableRetry(true);                     // no silent resend of a request, POSTs included
    // every request carries the time left and, inside idempotentBy, the idempotency key
    return IdempotencyKeyHeader.standard().sendOn(DeadlineHeader.standard().sendOn(client));
  }
  // end-snippet

  public Mono<String> get(String path) {
    return get(http, breaker, retry, path);
  }

  // snippet:cookbook-reactor-netty-tool
  /** A read-only tool: GET {@code path}; an attempt gets at most 2 s, the whole call 10 s. */
  static Mono<String> get(HttpClient http, CircuitBreaker breaker, RetryPolicy retry, String path) {
    return HttpResponses.bodyAsString(http.get().uri(path))        // an error status: HttpStatusException
        .transformDeferred(perCallTimeout(Duration.ofSeconds(2)))  // instead of responseTimeout
        .transformDeferred(guardedBy(breaker))
        .transformDeferred(retryWithBudget(retry))
        .transformDeferred(withDeadline(Duration.ofSeconds(10)));
  }
  // end-snippet

  public Mono<String> deposit(Deposit deposit) {
    return deposit(http, breaker, retry, store, deposit);
  }

  // snippet:cookbook-reactor-netty-payment
  /** A payment: at most one charge per booking; the API gets the key (the client sends it) to dedupe too. */
  static Mono<String> deposit(HttpClient http, CircuitBreaker breaker, RetryPolicy retry,
      IdempotencyStore store, Deposit deposit) {
    IdempotencyKey key = IdempotencyKey.explicit("payments.deposit", deposit.bookingId(), deposit);
    return HttpResponses.bodyAsString(http.post().uri("/payments")
            .send(ByteBufMono.fromString(Mono.just(deposit.bookingId() + "," + deposit.amountEuros()))))
        .transformDeferred(perCallTimeout(Duration.ofSeconds(2)))
        .transformDeferred(guardedBy(breaker))
        .transformDeferred(retryWithBudget(retry))
        .transformDeferred(idempotentBy(key, store, String.class))
        .transformDeferred(sideEffect(SideEffect.NON_IDEMPOTENT_WRITE))
        .transformDeferred(withDeadline(Duration.ofSeconds(10)));
  }
  // end-snippet

  public Flux<String> events(String path, StreamTimeouts timeouts) {
    return events(http, path, timeouts);
  }

  // snippet:cookbook-reactor-netty-events
  /** A job's progress as server-sent events, timed by progress: a first event in time, then no stall past idle. */
  static Flux<String> events(HttpClient http, String path, StreamTimeouts timeouts) {
    return http.get().uri(path)
        .response((response, body) -> response.status().code() >= 400
            ? HttpResponses.statusError(response, body)
            : ServerSentEvents.decode(body))          // comments (heartbeats) are not items
        .map(ServerSentEvent::data)
        .transformDeferred(streamTimeouts(timeouts))  // a stall cancels the response: its connection is closed
        .transformDeferred(withDeadline(Duration.ofMinutes(5)));
  }
  // end-snippet

  /** Runs the tools against the scripted tool server on loopback (its first flight search stalls for 28 s). */
  public static void main(String[] args) {
    try (ScriptedToolServer server = new ScriptedToolServer()) {
      ReactorNettyTools tools = new ReactorNettyTools(client("127.0.0.1", server.port()),
          CircuitBreaker.ofDefaults("travel"), WebClientTools.retryPolicy(), IdempotencyStore.inMemory());
      System.out.println("flights (the first attempt stalls and is cut at 2 s): " + tools.get("/flights").block());
      System.out.println("stalled requests the server saw cancelled: " + server.stalledRequestsCancelled());
      Deposit deposit = new Deposit("booking-42", 50);
      System.out.println("deposit: " + tools.deposit(deposit).block() + ", again: " + tools.deposit(deposit).block());
    }
    Schedulers.shutdownNow();
  }
}
