package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.*;

import io.breakwater.examples.guide.Domain.Flights;
import io.breakwater.examples.guide.Domain.Offers;
import io.breakwater.examples.guide.Domain.Query;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.retry.StreamResume;
import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The snippets of {@code docs/retry.md}; {@code RetriesTest} runs them in virtual time. */
public final class Retries {

  private Retries() {}

  // snippet:domain-events
  /** A server-sent event with its id. */
  public record Event(String id, String data) {}

  /** A source of events that can start after a given event id (as SSE's {@code Last-Event-ID}). */
  public interface EventSource {
    Flux<Event> stream(String path, String lastEventId);
  }
  // end-snippet

  // snippet:retry-policy
  public static Mono<Offers> offers(Flights client, Query query) {
    RetryPolicy flights = RetryPolicy.builder()
        .name("flights")                                              // the dependency: budget, metrics, messages
        .maxRetries(3)
        .backoff(Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(5)))
        .build();

    Mono<Offers> offers = client.search(query)
        .transformDeferred(perCallTimeout())                          // each attempt gets its own budget
        .transformDeferred(retryWithBudget(flights))
        .transformDeferred(withRetryBudget(5))                        // at most 5 retries for the whole task
        .transformDeferred(withDeadline(Duration.ofSeconds(20)));
    return offers;
  }
  // end-snippet

  /** A stream resumed after the last delivered event instead of replayed. */
  // snippet:retry-stream-resume
  public static Flux<Event> events(EventSource sse, RetryPolicy policy) {
    Flux<Event> events = Flux.deferContextual(ctx -> sse.stream("/events",
            StreamResume.lastDelivered(ctx).map(String::valueOf).orElse(null)))     // e.g. Last-Event-ID
        .transformDeferred(retryWithBudget(policy, StreamResume.byId(Event::id)));
    return events;
  }
  // end-snippet
}
