package io.breakwater.examples.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.deadline.DeadlineHeader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/** The example on a real Netty server, its two APIs on loopback: the weather API answers, the flights API is down. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient(timeout = "PT30S")
class TravelAssistantApplicationIT {

  static final AtomicInteger FLIGHT_REQUESTS = new AtomicInteger();
  static final List<String> FLIGHTS_TIME_LEFT = new CopyOnWriteArrayList<>();
  static final DisposableServer WEATHER = HttpServer.create().host("127.0.0.1").port(0)
      .route(r -> r.get("/forecast/{city}", (req, res) -> res.sendString(Mono.just("sunny in " + req.param("city")))))
      .bindNow();
  static final DisposableServer FLIGHTS = HttpServer.create().host("127.0.0.1").port(0)
      .route(r -> r.get("/flights/{city}", (req, res) -> {
        FLIGHT_REQUESTS.incrementAndGet();
        FLIGHTS_TIME_LEFT.add(String.valueOf(req.requestHeaders().get(DeadlineHeader.DEFAULT_NAME)));
        return res.status(503).sendString(Mono.just("maintenance"));
      }))
      .bindNow();

  @DynamicPropertySource
  static void apis(DynamicPropertyRegistry registry) {
    registry.add("travel.weather-url", () -> "http://127.0.0.1:" + WEATHER.port());
    registry.add("travel.flights-url", () -> "http://127.0.0.1:" + FLIGHTS.port());
  }

  @AfterAll
  static void stopApis() {
    WEATHER.disposeNow();
    FLIGHTS.disposeNow();
  }

  @Autowired
  WebTestClient web;

  @Test
  void theAgentStepGetsTheWeatherAndFeedbackForTheFailingFlightsTool() {
    web.get().uri("/assistant/step?city=lisbon").header("Breakwater-Timeout", "8S").exchange()
        .expectStatus().isOk()
        .expectBody()
        .jsonPath("$.weather").value(String.class, w -> assertThat(w).contains("sunny in lisbon"))
        .jsonPath("$.flights").value(String.class, f -> assertThat(f).contains("flights.searchCached"));
    assertThat(FLIGHT_REQUESTS.get()).as("the first attempt and the 2 retries of application.yml").isEqualTo(3);
    assertThat(FLIGHTS_TIME_LEFT).as("each attempt tells the API its share of the caller's 8 s (the starter's filter)")
        .hasSize(3)
        .allSatisfy(timeLeft -> assertThat(DeadlineHeader.parse(timeLeft)).isPositive()
            .isLessThan(Duration.ofSeconds(8).toNanos()));

    web.get().uri("/actuator/breakwater").exchange()
        .expectStatus().isOk()
        .expectBody()
        .jsonPath("$.breakers['weather.forecast'].state").isEqualTo("CLOSED")
        .jsonPath("$.breakers['flights.search'].failedCalls").isEqualTo(3)
        .jsonPath("$.retryBudgets.flights.level").isNumber();
  }

  @Autowired
  ApplicationContext context;

  /** Boot 4's Jackson 3 serves the application; Breakwater's tools need no mapper of the application's. */
  @Test
  void bootsJackson3MapperServesTheAppAndBreakwaterNeedsNoJackson2Mapper() {
    assertThat(context.getBeansOfType(tools.jackson.databind.json.JsonMapper.class)).hasSize(1);
    assertThat(context.getBeanNamesForType(com.fasterxml.jackson.databind.ObjectMapper.class))
        .as("the tools of theAgentStep... run with Breakwater's own Jackson 2 mapper").isEmpty();
  }

  @Test
  void theDocsShowThisApplicationYml() throws Exception {
    String yml = Files.readString(Path.of("src/main/resources/application.yml"), StandardCharsets.UTF_8);
    String page = Files.readString(Path.of("../docs/spring-boot.md"), StandardCharsets.UTF_8);
    assertThat(page).as("docs/spring-boot.md quotes examples-spring-boot's application.yml whole")
        .contains("```yaml\n" + yml + "```");
  }
}
