package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.*;

import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.examples.guide.Domain.Itinerary;
import io.breakwater.examples.guide.Domain.Offers;
import io.breakwater.examples.guide.Domain.Planner;
import io.breakwater.examples.guide.Domain.Query;
import io.breakwater.examples.guide.Domain.TripRequest;
import java.time.Duration;
import java.util.function.Function;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;

/** The snippets of {@code docs/deadline.md}; {@code DeadlinesIT} runs them. */
public final class Deadlines {

  private Deadlines() {}

  // snippet:domain-deadlines
  /** A client whose calls take an explicit timeout. */
  public interface TimedFlights {
    Mono<Offers> search(Query query, Duration timeout);
  }

  /** A blocking client from before Reactor. */
  public interface LegacyClient {
    String call(Duration timeout);
  }
  // end-snippet

  // snippet:deadline-set
  public static Mono<Itinerary> plan(Planner planner, TripRequest request) {
    Mono<Itinerary> plan = planner.plan(request)
        .transformDeferred(withDeadline(DeadlineSpec.builder(Duration.ofSeconds(30)).name("plan-trip").build()));
    return plan;
  }
  // end-snippet

  /** Passes the time left to a client that takes a timeout; 30 s when no deadline is set. */
  // snippet:deadline-read
  public static Mono<Offers> searchWithinDeadline(TimedFlights client, Query query) {
    Mono<Offers> offers = Mono.deferContextual(ctx -> Deadline.from(ctx)
        .map(d -> client.search(query, d.remaining()))
        .orElseGet(() -> client.search(query, Duration.ofSeconds(30))));
    return offers;
  }
  // end-snippet

  /** A blocking call that reads the deadline from its thread. */
  // snippet:deadline-thread-local
  public static Mono<String> legacy(LegacyClient legacyClient) {
    Hooks.enableAutomaticContextPropagation();   // once, at start-up

    Mono<String> answer = Mono.fromCallable(() -> legacyClient.call(Deadline.current().map(Deadline::remaining)
            .orElseThrow()))
        .subscribeOn(Schedulers.boundedElastic())
        .transformDeferred(withDeadline(Duration.ofSeconds(5)));
    return answer;
  }
  // end-snippet

  /** A client that sends the time left, and a loopback server that honours it. */
  public record Service(HttpClient client, DisposableServer server) implements AutoCloseable {
    @Override
    public void close() {
      server.disposeNow();
    }
  }

  public static Service service(Function<HttpServerRequest, String> answer) {
    DisposableServer server = server(answer);
    return new Service(client().host("127.0.0.1").port(server.port()), server);
  }

  // snippet:deadline-header
  static HttpClient client() {
    DeadlineHeader header = DeadlineHeader.standard();
    return header.sendOn(HttpClient.create());   // every request carries the deadline in its Context
  }

  static DisposableServer server(Function<HttpServerRequest, String> answer) {
    DeadlineHeader header = DeadlineHeader.standard();
    return HttpServer.create().host("127.0.0.1").port(0)     // a downstream service that honours the deadline
        .handle(header.honour((request, response) -> response.sendString(Mono.just(answer.apply(request)))))
        .bindNow();
  }
  // end-snippet
}
