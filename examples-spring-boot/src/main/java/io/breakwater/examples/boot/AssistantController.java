package io.breakwater.examples.boot;

// snippet:boot-controller
import static io.breakwater.Breakwater.withTaskBudget;

import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.boot.DeadlineDefaults;
import io.breakwater.boot.ToolDescriptors;
import java.time.Duration;
import java.util.Map;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/** One agent step: ask the weather and the flights tools, and give the model what each said, failures included. */
@RestController
class AssistantController {

  private final Tool<String, String> weather;
  private final Tool<String, String> flights;
  private final DeadlineDefaults deadlines;

  AssistantController(ToolDescriptors tools, DeadlineDefaults deadlines, WebClient.Builder http,
      @Value("${travel.weather-url}") String weatherUrl, @Value("${travel.flights-url}") String flightsUrl) {
    this.deadlines = deadlines;
    WebClient weatherApi = client(http, weatherUrl);
    WebClient flightsApi = client(http, flightsUrl);
    this.weather = Tool.of(tools.descriptor("weather.forecast"),          // breaker, retry, timeouts: from yml
        city -> weatherApi.get().uri("/forecast/{city}", city).retrieve().bodyToMono(String.class), String.class);
    this.flights = Tool.of(tools.descriptor("flights.search"),
        city -> flightsApi.get().uri("/flights/{city}", city).retrieve().bodyToMono(String.class), String.class);
  }

  @GetMapping("/assistant/step")
  Mono<Map<String, String>> step(@RequestParam String city) {
    TaskBudget budget = TaskBudget.builder(deadlines.spec("assistant-step", Duration.ofSeconds(10)))
        .retries(3)
        .maxSteps(4)
        .build();
    return Mono.zip(weather.outcome(city).map(ToolOutcome::forModel),     // a value, or feedback for the model
            flights.outcome(city).map(ToolOutcome::forModel))
        .map(both -> Map.of("weather", both.getT1(), "flights", both.getT2()))
        .transformDeferred(withTaskBudget(budget));      // nested in the request's own deadline, if it sent one
  }

  /**
   * A client of one API. Boot's builder carries {@code BreakwaterExchangeFilter} (the starter puts it there, since
   * {@code breakwater-spring-webflux} is on the classpath): error statuses fail as {@code HttpStatusException}s with
   * their headers, and each request sends the time left before the deadline.
   */
  private static WebClient client(WebClient.Builder http, String baseUrl) {
    return http.clone().baseUrl(baseUrl).build();
  }
}
// end-snippet
