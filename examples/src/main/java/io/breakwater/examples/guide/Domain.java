package io.breakwater.examples.guide;

import java.util.List;
import reactor.core.publisher.Mono;

/** The small travel domain the guide's snippets are written against; the tests supply the implementations. */
public final class Domain {

  private Domain() {}

  // snippet:domain-travel
  /** A flight search. */
  public record Query(String from, String to, String date) {}

  /** The flights a search found. */
  public record Offers(List<String> flights) {
    public static Offers none() {
      return new Offers(List.of());
    }
  }

  /** An order to refund. */
  public record Order(String id, int amountCents) {}

  /** What the payment provider answered. */
  public record Receipt(String orderId, String status) {}

  /** A weather forecast. */
  public record Forecast(String city, String summary) {}

  /** A request to plan a trip, and the plan. */
  public record TripRequest(String destination) {}

  public record Itinerary(String summary) {}

  /** The flights API. */
  public interface Flights {
    Mono<Offers> search(Query query);
  }

  /** The payments API: refunds are not idempotent on its side. */
  public interface Payments {
    Mono<Receipt> refund(Order order);
  }

  /** The weather API. */
  public interface Weather {
    Mono<Forecast> forecast(String city);
  }

  /** The trip planner. */
  public interface Planner {
    Mono<Itinerary> plan(TripRequest request);
  }
  // end-snippet
}
