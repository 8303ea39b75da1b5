package io.breakwater.boot.app;

import io.breakwater.agent.Tool;
import io.breakwater.boot.ToolDescriptors;
import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.failure.HttpStatusException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

/** A WebFlux application that calls a downstream API through a tool configured only in its properties. */
@SpringBootApplication(proxyBeanMethods = false)
public class StarterTestApplication {

  /** How many times each handler was called. */
  @Component
  public static class HandlerCalls {
    public final AtomicInteger forecast = new AtomicInteger();
  }

  @RestController
  static class ForecastController {
    private final Tool<String, String> forecast;
    private final HandlerCalls calls;

    ForecastController(ToolDescriptors tools, WebClient.Builder webClients, HandlerCalls calls,
        @Value("${downstream.url:http://127.0.0.1:9}") String downstream) {
      this.calls = calls;
      WebClient client = webClients.baseUrl(downstream)
          .clientConnector(new ReactorClientHttpConnector(DeadlineHeader.standard().sendOn(HttpClient.create())))
          .defaultStatusHandler(HttpStatusCode::isError, response -> Mono.just(new HttpStatusException(
              response.statusCode().value(), response.headers().asHttpHeaders().asMultiValueMap())))
          .build();
      this.forecast = Tool.of(tools.descriptor("weather.forecast"),
          city -> client.get().uri("/forecast/{city}", city).retrieve().bodyToMono(String.class), String.class);
    }

    @GetMapping("/forecast/{city}")
    Mono<String> forecast(@PathVariable String city) {
      calls.forecast.incrementAndGet();
      return forecast.call(city);
    }

    @GetMapping("/slow")
    Mono<String> slow() {
      return Mono.delay(Duration.ofSeconds(30)).map(x -> "late");
    }
  }
}
