package io.breakwater.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.boot.app.StarterTestApplication;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.idempotency.IdempotencyPolicy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.core.io.ClassPathResource;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/** The starter with nothing configured but one tool: core defaults, DEGRADED health, a read-only endpoint. */
@SpringBootTest(classes = StarterTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {"breakwater.tools[weather.forecast].side-effect=read-only",
        "management.endpoints.web.exposure.include=health,breakwater",
        "management.endpoint.health.show-details=always"})
@AutoConfigureWebTestClient(timeout = "PT60S")
class DefaultsIT {

  @Autowired
  WebTestClient web;
  @Autowired
  CircuitBreakerRegistry breakers;
  @Autowired
  DeadlineDefaults deadlines;
  @Autowired
  IdempotencyPolicy idempotency;

  @Test
  void unsetPropertiesKeepTheCoreDefaults() {
    DeadlineSpec spec = deadlines.spec(Duration.ofSeconds(10));
    assertThat(spec.perCallFraction()).isEqualTo(DeadlineSpec.DEFAULT_PER_CALL_FRACTION);
    assertThat(spec.idleCap()).isEqualTo(DeadlineSpec.DEFAULT_IDLE_CAP);
    assertThat(breakers.breaker("any").minimumCalls()).isEqualTo(20);
    assertThat(idempotency.ttl()).isEqualTo(IdempotencyPolicy.DEFAULT_TTL);
    assertThat(idempotency.store().getClass().getSimpleName()).isEqualTo("InMemoryIdempotencyStore");
  }

  @Test
  void anOpenBreakerIsDegradedAndLeavesTheApplicationUp() {
    breakers.breaker("weather.forecast").forceOpen();
    try {
      web.get().uri("/actuator/health").exchange()
          .expectStatus().isOk()
          .expectBody()
          .jsonPath("$.status").isEqualTo("UP")
          .jsonPath("$.components.breakwater.status").isEqualTo("DEGRADED");
    } finally {
      breakers.breaker("weather.forecast").forceClosed();
    }
    web.get().uri("/actuator/health").exchange().expectBody()
        .jsonPath("$.components.breakwater.status").isEqualTo("UP");
  }

  @Test
  void theWriteOperationIsOffUntilAccessIsUnrestrictedAndTheAnswerSaysWhatToSet() {
    web.post().uri("/actuator/breakwater/breakers/weather.forecast").contentType(MediaType.APPLICATION_JSON)
        .bodyValue(Map.of("state", "open")).exchange()
        .expectStatus().isEqualTo(405)
        .expectHeader().valueEquals("Allow", "GET")
        .expectBody(String.class).value(body -> assertThat(body)
            .contains("management.endpoint.breakwater.access=unrestricted"));
    assertThat(breakers.breaker("weather.forecast").state().name()).isEqualTo("CLOSED");
    web.get().uri("/actuator/breakwater").exchange().expectStatus().isOk()
        .expectBody().jsonPath("$.breakers['weather.forecast'].state").isEqualTo("CLOSED");
  }

  @Test
  void configurationMetadataIsGeneratedForIdes() throws Exception {
    String metadata = new ClassPathResource("META-INF/spring-configuration-metadata.json")
        .getContentAsString(StandardCharsets.UTF_8);
    assertThat(metadata).contains("\"breakwater.breakers.defaults.failure-rate-threshold\"")
        .contains("\"breakwater.retry.defaults.backoff.type\"")
        .contains("\"breakwater.idempotency.ttl\"")
        .contains("\"breakwater.tools\"")
        .contains("\"breakwater.deadline.per-call-fraction\"")
        .contains("\"breakwater.health.open-status\"");
  }
}
