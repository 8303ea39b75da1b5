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

  /** A client whose calls take an explicit timeout. */
  public interface TimedFlights {
    Mono<Offers> search(Query query, Duration timeout);
  }

  /** A blocking client from before Reactor. */
  public interface LegacyClient {
    String call(Duration timeout);
  }

  public static Mono<Itinerary> plan(Planner planner, TripRequest request) {
    // snippet:deadline-set
    Mono<Itinerary> plan = planner.plan(request)
        .transformDeferred(withDeadline(DeadlineSpec.builder(Duration.ofSeconds(30)).name("plan-trip").build()));
    // end-snippet
    return plan;
  }

  /** Passes the time left to a client that takes a timeout; 30 s when no deadline is set. */
  public static Mono<Offers> searchWithinDeadline(TimedFlights client, Query query) {
    // snippet:deadline-read
    Mono<Offers> offers = Mono.deferContextual(ctx -> Deadline.from(ctx)
        .map(d -> client.search(query, d.remaining()))
        .orElseGet(() -> client.search(query, Duration.ofSeconds(30))));
    // end-snippet
    return offers;
  }

  /** A blocking call that reads the deadline from its thread. */
  public static Mono<String> legacy(LegacyClient legacyClient) {
    // snippet:deadline-thread-local
    Hooks.enableAutomaticContextPropagation();   // once, at start-up

    Mono<String> answer = Mono.fromCallable(() -> legacyClient.call(Deadline.current().map(Deadline::remaining)
            .orElseThrow()))
        .subscribeOn(Schedulers.boundedElastic())
        .transformDeferred(withDeadline(Duration.ofSeconds(5)));
    // end-snippet
    return answer;
  }

  /** A client that sends the time left, and a loopback server that honours it. */
  public record Service(HttpClient client, DisposableServer server) implements AutoCloseable {
    @Override
    public void close() {
      server.disposeNow();
    }
  }

  public static Service service(Function<HttpServerRequest, String> answer) {
    // snippet:deadline-header
    DeadlineHeader header = DeadlineHeader.standard();

    HttpClient client = header.sendOn(HttpClient.create());   // every request carries the deadline in its Context

    DisposableServer server = HttpServer.create().host("127.0.0.1").port(0)
        .handle(header.honour((request, response) -> response.sendString(Mono.just(answer.apply(request)))))
        .bindNow();
    // end-snippet
    return new Service(client.host("127.0.0.1").port(server.port()), server);
  }
}
