package io.breakwater.examples.cookbook;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.sideEffect;
import static io.breakwater.Breakwater.streamTimeouts;
import static io.breakwater.Breakwater.withDeadline;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.examples.travel.ScriptedToolServer;
import io.breakwater.examples.travel.TravelAgent.Deposit;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.spring.webflux.BreakwaterExchangeFilter;
import io.breakwater.stream.StreamTimeouts;
import java.time.Duration;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Cookbook: agent tools on Spring's {@link WebClient}. Every call runs under a deadline, sends the time it has left to
 * the server, retries what is worth retrying (a 429 waits for its {@code Retry-After}), passes a circuit breaker on
 * every attempt, and a payment happens once per key, with the key sent to the payment API as well.
 *
 * <pre>{@code
 * WebClientTools tools = new WebClientTools(WebClientTools.client("http://localhost:8080"),
 *     CircuitBreaker.ofDefaults("travel"), WebClientTools.retryPolicy(), IdempotencyStore.inMemory());
 * String hotels = tools.get("/hotels").block();
 * }</pre>
 */
public final class WebClientTools {

  private final WebClient http;
  private final CircuitBreaker breaker;
  private final RetryPolicy retry;
  private final IdempotencyStore store;

  public WebClientTools(WebClient http, CircuitBreaker breaker, RetryPolicy retry, IdempotencyStore store) {
    this.http = http;
    this.breaker = breaker;
    this.retry = retry;
    this.store = store;
  }

  // snippet:cookbook-webclient-client
  public static WebClient client(String baseUrl) {
    return WebClient.builder()
        .baseUrl(baseUrl)
        .filter(BreakwaterExchangeFilter.create())   // error statuses as HttpStatusException; time left and key sent
        .build();
  }
  // end-snippet

  /** Up to two retries, full jitter from 100 ms to 1 s; 429s wait for their Retry-After instead. */
  public static RetryPolicy retryPolicy() {
    return RetryPolicy.builder().name("travel").maxRetries(2)
        .backoff(Backoff.fullJitter(Duration.ofMillis(100), Duration.ofSeconds(1)))
        .build();
  }

  public Mono<String> get(String path) {
    return get(http, breaker, retry, path);
  }

  // snippet:cookbook-webclient-tool
  /** A read-only tool: GET {@code path}, within 10 s, retried and guarded. */
  static Mono<String> get(WebClient http, CircuitBreaker breaker, RetryPolicy retry, String path) {
    return http.get().uri(path)
        .retrieve()
        .bodyToMono(String.class)
        .transformDeferred(perCallTimeout())          // each attempt: min(remaining × 0.6, 12 s)
        .transformDeferred(guardedBy(breaker))        // every attempt passes the breaker
        .transformDeferred(retryWithBudget(retry))    // 5xx, timeouts; a 429 after its Retry-After
        .transformDeferred(withDeadline(Duration.ofSeconds(10)));
  }
  // end-snippet

  public Mono<String> deposit(Deposit deposit) {
    return deposit(http, breaker, retry, store, deposit);
  }

  // snippet:cookbook-webclient-payment
  /** A payment: at most one charge per booking, however often the model asks for it. */
  static Mono<String> deposit(WebClient http, CircuitBreaker breaker, RetryPolicy retry,
      IdempotencyStore store, Deposit deposit) {
    IdempotencyKey key = IdempotencyKey.explicit("payments.deposit", deposit.bookingId(), deposit);
    return http.post().uri("/payments")              // the filter sends the key: the API dedupes too
        .bodyValue(deposit)
        .retrieve()
        .bodyToMono(String.class)
        .transformDeferred(perCallTimeout())
        .transformDeferred(guardedBy(breaker))
        .transformDeferred(retryWithBudget(retry))    // allowed: the key is held across the retries
        .transformDeferred(idempotentBy(key, store, String.class))
        .transformDeferred(sideEffect(SideEffect.NON_IDEMPOTENT_WRITE))
        .transformDeferred(withDeadline(Duration.ofSeconds(10)));
  }
  // end-snippet

  public Flux<String> events(String path, StreamTimeouts timeouts) {
    return events(http, path, timeouts);
  }

  // snippet:cookbook-webclient-events
  /** A job's progress as server-sent events, timed by progress: a first event in time, then no stall past idle. */
  static Flux<String> events(WebClient http, String path, StreamTimeouts timeouts) {
    return http.get().uri(path)
        .retrieve()
        .bodyToFlux(String.class)                     // each event's data; comments (heartbeats) are not items
        .transformDeferred(streamTimeouts(timeouts))  // a stall cancels the exchange: its connection is closed
        .transformDeferred(withDeadline(Duration.ofMinutes(5)));
  }
  // end-snippet

  /** Runs the tools against the scripted tool server on loopback and prints what they got. */
  public static void main(String[] args) {
    try (ScriptedToolServer server = new ScriptedToolServer()) {
      WebClientTools tools = new WebClientTools(client("http://127.0.0.1:" + server.port()),
          CircuitBreaker.ofDefaults("travel"), retryPolicy(), IdempotencyStore.inMemory());
      System.out.println("hotels (after a 429 with Retry-After: 1): " + tools.get("/hotels").block());
      Deposit deposit = new Deposit("booking-42", 50);
      System.out.println("deposit: " + tools.deposit(deposit).block());
      System.out.println("deposit again: " + tools.deposit(deposit).block());
      System.out.println("charges at the server: " + server.charges()
          + ", deadline headers it received: " + server.deadlineHeaders());
    }
    Schedulers.shutdownNow();
  }
}
