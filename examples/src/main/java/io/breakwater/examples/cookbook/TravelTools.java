package io.breakwater.examples.cookbook;

import dev.langchain4j.agent.tool.Tool;
import java.util.concurrent.atomic.AtomicInteger;

// snippet:langchain4j-tool-methods
/** The tools the model may call: LangChain4j's {@code @Tool} methods, unchanged. */
public class TravelTools {
  private final AtomicInteger bookings = new AtomicInteger();

  @Tool("Searches the flights to a city")
  public String searchFlights(String city) {
    return "AF123 to " + city + " at 09:10";
  }

  @Tool("Books a seat on a flight for a passenger")
  public String bookFlight(String flight, String passenger) {
    return "booking B-" + bookings.incrementAndGet() + ": " + passenger + " on " + flight;
  }

  /** Bookings made so far. */
  public int bookings() {
    return bookings.get();
  }
}
// end-snippet
