package io.breakwater.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.breakwater.agent.ToolDescriptor;
import io.breakwater.boot.app.Downstream;
import io.breakwater.boot.app.StarterTestApplication;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.failure.FailureKind;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.RetryPolicy;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * A WebFlux application on a real Netty server (random port) configured only by {@code application-configured.yml},
 * calling a real loopback downstream server through the tool {@code weather.forecast}.
 */
@SpringBootTest(classes = StarterTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient(timeout = "PT60S")
@ActiveProfiles("configured")
class ConfiguredApplicationIT {

  static final Downstream DOWNSTREAM = Downstream.start();

  @DynamicPropertySource
  static void downstream(DynamicPropertyRegistry registry) {
    registry.add("downstream.url", DOWNSTREAM::url);
  }

  @AfterAll
  static void stopDownstream() {
    DOWNSTREAM.close();
  }

  @Autowired
  WebTestClient web;
  @Autowired
  CircuitBreakerRegistry breakers;
  @Autowired
  RetryPolicies policies;
  @Autowired
  DeadlineDefaults deadlines;
  @Autowired
  IdempotencyPolicy idempotency;
  @Autowired
  ToolDescriptors tools;
  @Autowired
  MeterRegistry meters;
  @Autowired
  ObservationRegistry observations;
  @Autowired
  StarterTestApplication.HandlerCalls handlerCalls;

  @Test
  void breakerSettingsBindPerInstanceAndPerFamilyOverTheDefaults() {
    CircuitBreaker weather = breakers.breaker("weather.forecast");
    assertThat(weather.minimumCalls()).isEqualTo(2);
    assertThat(weather.openDuration()).isEqualTo(Duration.ofSeconds(1));
    assertThat(weather.failureRateThreshold()).isEqualTo(0.5);
    assertThat(weather.rampUp()).isZero();

    CircuitBreaker flights = breakers.breaker("flights.search");
    assertThat(flights.failureRateThreshold()).isEqualTo(0.3);
    assertThat(flights.minimumCalls()).as("from the defaults").isEqualTo(10);
    assertThat(flights.slowCallThreshold()).as("0s turns the slow-call trigger off").isNull();

    CircuitBreaker family = breakers.family("flights.search").orElseThrow();
    assertThat(family.name()).isEqualTo("flights");
    assertThat(family.openDuration()).isEqualTo(Duration.ofSeconds(45));
    assertThat(family.minimumCalls()).isEqualTo(10);
    assertThat(breakers.breaker("unconfigured.tool").openDuration()).isEqualTo(Duration.ofSeconds(20));
  }

  @Test
  void retryPoliciesBindWithTheirBackoffsPerKindBasesAndBudgets() {
    RetryPolicy weather = policies.policy("weather");
    assertThat(weather.maxRetries()).isEqualTo(2);
    assertThat(weather.rateLimitedBase()).isEqualTo(Duration.ofMillis(100));
    assertThat(weather.backoff()).hasToString("fixed(PT0.05S)");
    assertThat(weather.budget().orElseThrow()).hasToString("RetryBudget.ratio(0.5, 20.0/s, capacity 200)");

    RetryPolicy flights = policies.policy("flights");
    assertThat(flights.maxRetries()).as("from the defaults").isEqualTo(1);
    assertThat(flights.backoff()).hasToString("exponential(PT0.1S, PT2S, 0.1)");
    assertThat(flights.timeoutBase()).isZero();
    assertThat(flights.budget().orElseThrow()).as("the budget it names").hasToString("RetryBudget.ratio(0.2, 5.0/s, capacity 50)");

    RetryPolicy other = policies.policy("unconfigured");
    assertThat(other.name()).isEqualTo("unconfigured");
    assertThat(other.maxRetries()).isEqualTo(1);
    assertThat(other.budget().orElseThrow()).as("a budget of its own, not the JVM-wide default").isNotSameAs(
        RetryPolicy.builder().name("unconfigured").build().budget(reactor.core.scheduler.Schedulers.parallel()));
    assertThat(policies.policy("unconfigured")).isSameAs(other);
  }

  @Test
  void deadlineIdempotencyAndToolSettingsBind() {
    DeadlineSpec spec = deadlines.spec(Duration.ofSeconds(10));
    assertThat(spec.perCallFraction()).isEqualTo(0.5);
    assertThat(spec.perCallCap()).isEqualTo(Duration.ofSeconds(8));
    assertThat(spec.idleFraction()).isEqualTo(0.25);
    assertThat(spec.idleCap()).isEqualTo(Duration.ofSeconds(2));

    assertThat(idempotency.ttl()).isEqualTo(Duration.ofHours(2));
    assertThat(idempotency.lease()).isEqualTo(Duration.ofMinutes(1));
    assertThat(idempotency.store().getClass().getSimpleName()).isEqualTo("InMemoryIdempotencyStore");

    ToolDescriptor weather = tools.descriptor("weather.forecast");
    assertThat(weather.sideEffect()).isEqualTo(SideEffect.READ_ONLY);
    assertThat(weather.family()).isEqualTo("weather");
    assertThat(weather.retry()).isSameAs(policies.policy("weather"));
    assertThat(weather.breakers()).isSameAs(breakers);
    assertThat(weather.timeouts().isAdaptive()).isFalse();
    assertThat(weather.unavailableAfter()).containsEntry(FailureKind.TIMEOUT, 5)
        .containsEntry(FailureKind.SERVER_ERROR, 5).containsEntry(FailureKind.RATE_LIMITED, 2);
    assertThat(weather.logArgs()).containsExactly("city");

    ToolDescriptor book = tools.descriptor("flights.book");
    assertThat(book.sideEffect()).isEqualTo(SideEffect.NON_IDEMPOTENT_WRITE);
    assertThat(book.family()).isEqualTo("travel");
    assertThat(book.idempotency()).isSameAs(idempotency);
    assertThat(book.transientFields()).containsExactly("requestId");
    assertThat(book.alternates()).containsExactly("flights.hold");
    assertThat(book.redact()).containsExactly("passport");
    assertThat(book.timeouts().percentile()).isEqualTo(95.0);
    assertThat(book.timeouts().min()).isEqualTo(Duration.ofSeconds(1));
    assertThat(book.timeouts().warmUpSamples()).isEqualTo(10);
    assertThat(book.timeouts().warmUpTime()).isEqualTo(Duration.ofSeconds(5));
    assertThat(book.idempotencyNamespace().apply(reactor.util.context.Context.of("tenant", "acme")))
        .isEqualTo("acme");
  }

  @Test
  void metersAndObservationsGoToTheApplicationsRegistries() {
    assertThat(meters.find("breakwater.breaker.state").tag("breaker", "weather.forecast").gauges()).isNotEmpty();
    assertThat(meters.find("breakwater.retry.budget.level").tag("dependency", "weather").gauge()).isNotNull();
    assertThat(tools.descriptor("weather.forecast").meterRegistry()).isSameAs(meters);
    assertThat(tools.descriptor("weather.forecast").observationRegistry()).isSameAs(observations);
    assertThat(policies.policy("weather").meterRegistry()).isSameAs(meters);
  }

  @Test
  void theDeadlineArrivesAtTheDownstreamCallAsTheHeader() {
    web.get().uri("/forecast/lisbon").header(DeadlineHeader.DEFAULT_NAME, "5S").exchange()
        .expectStatus().isOk()
        .expectBody(String.class).isEqualTo("sunny in lisbon");
    List<Downstream.Request> seen = DOWNSTREAM.requests("lisbon");
    assertThat(seen).hasSize(1);
    long sentNanos = DeadlineHeader.parse(seen.get(0).headers().get("breakwater-timeout"));
    assertThat(Duration.ofNanos(sentNanos))
        .as("the call's share of the 5 s deadline (per-call fraction 0.5), less what the server already used")
        .isLessThanOrEqualTo(Duration.ofMillis(2500)).isPositive();
  }

  @Test
  void anExpiredDeadlineIsAnswered504WithoutCallingTheHandler() {
    int before = handlerCalls.forecast.get();
    web.get().uri("/forecast/porto").header(DeadlineHeader.DEFAULT_NAME, "0n").exchange()
        .expectStatus().isEqualTo(HttpStatus.GATEWAY_TIMEOUT);
    assertThat(handlerCalls.forecast.get()).isEqualTo(before);
    assertThat(DOWNSTREAM.requests("porto")).isEmpty();
  }

  @Test
  void aHandlerThatOutlivesItsDeadlineIsAnswered504() {
    web.get().uri("/slow").header(DeadlineHeader.DEFAULT_NAME, "300m").exchange()
        .expectStatus().isEqualTo(HttpStatus.GATEWAY_TIMEOUT)
        .expectBody(String.class).value(body -> assertThat(body).contains("inbound Breakwater-Timeout"));
  }

  /** Issue 35: the retries inside the handler give up for the deadline: that is a timeout, answered 504, not 500. */
  @Test
  void aStalledUpstreamUnderAnInboundDeadlineIsAnswered504() {
    long start = System.nanoTime();
    web.get().uri("/forecast/stalled").header(DeadlineHeader.DEFAULT_NAME, "3S").exchange()
        .expectStatus().isEqualTo(HttpStatus.GATEWAY_TIMEOUT);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).as("by the 3 s deadline")
        .isLessThan(Duration.ofMillis(3_500));
  }

  @Test
  void aMalformedDeadlineIsAnswered400WithoutEchoingIt() {
    String hostile = "9<script>";
    int before = handlerCalls.forecast.get();
    web.get().uri("/forecast/faro").header(DeadlineHeader.DEFAULT_NAME, hostile).exchange()
        .expectStatus().isBadRequest()
        .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_PLAIN)
        .expectBody(String.class).value(body -> assertThat(body).doesNotContain(hostile).contains("e.g. 2500m"));
    assertThat(handlerCalls.forecast.get()).isEqualTo(before);
  }

  @Test
  void a429FromDownstreamIsRetriedAfterItsRetryAfter() {
    web.get().uri("/forecast/rate-limited-once").exchange()
        .expectStatus().isOk()
        .expectBody(String.class).isEqualTo("sunny in rate-limited-once");
    List<Downstream.Request> seen = DOWNSTREAM.requests("rate-limited-once");
    assertThat(seen).hasSize(2);
    assertThat(Duration.ofNanos(seen.get(1).arrivedNanos() - seen.get(0).arrivedNanos()))
        .as("Retry-After: 1 is honoured (the policy's own rate-limited base is 100 ms)")
        .isGreaterThanOrEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void theEndpointListsEveryConfiguredInstance() {
    web.get().uri("/actuator/breakwater").exchange()
        .expectStatus().isOk()
        .expectBody()
        .jsonPath("$.breakers['weather.forecast'].state").isEqualTo("CLOSED")
        .jsonPath("$.breakers['weather.forecast'].failureRate").isNumber()
        .jsonPath("$.breakers['weather.forecast'].slowCallRate").isNumber()
        .jsonPath("$.breakers['weather.forecast'].calls").isNumber()
        .jsonPath("$.breakers['flights.search'].state").isEqualTo("CLOSED")
        .jsonPath("$.families.flights.state").isEqualTo("CLOSED")
        .jsonPath("$.retryBudgets.weather.level").isNumber()
        .jsonPath("$.retryBudgets.flights.level").isNumber()
        .jsonPath("$.limits").isMap();
  }

  @Test
  void healthTurnsDownWhenABreakerOpensAndUpWhenItCloses() {
    DOWNSTREAM.failing.set(true);
    web.get().uri("/forecast/flaky").exchange().expectStatus().is5xxServerError();
    assertThat(breakers.breaker("weather.forecast").state()).isNotEqualTo(CircuitBreaker.State.CLOSED);
    web.get().uri("/actuator/health").exchange()
        .expectStatus().isEqualTo(HttpStatus.SERVICE_UNAVAILABLE)
        .expectBody()
        .jsonPath("$.status").isEqualTo("DOWN")
        .jsonPath("$.components.breakwater.status").isEqualTo("DOWN")
        .jsonPath("$.components.breakwater.details.breakers['weather.forecast']").value(String.class,
            state -> assertThat(state).as("open, or half-open once its 1 s passed").isIn("OPEN", "HALF_OPEN"));

    DOWNSTREAM.failing.set(false);
    // after the breaker's open duration (1 s) one probe goes through, succeeds, and closes it; calls before that
    // are rejected. The probe's success is recorded when the call completes, just after its answer may have gone out.
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
      web.get().uri("/forecast/flaky").exchange().expectStatus().isOk();
      assertThat(breakers.breaker("weather.forecast").state()).isEqualTo(CircuitBreaker.State.CLOSED);
    });
    web.get().uri("/actuator/health").exchange()
        .expectStatus().isOk()
        .expectBody().jsonPath("$.components.breakwater.status").isEqualTo("UP");
  }

  @Test
  void operatorsForceABreakerOpenAndClosedThroughTheEndpoint() {
    web.post().uri("/actuator/breakwater/families/flights").contentType(MediaType.APPLICATION_JSON)
        .bodyValue(Map.of("state", "open")).exchange()
        .expectStatus().isOk()
        .expectBody().jsonPath("$.state").isEqualTo("OPEN");
    assertThat(breakers.familyBreaker("flights").state()).isEqualTo(CircuitBreaker.State.OPEN);
    web.get().uri("/actuator/health/breakwater").exchange()
        .expectStatus().isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);

    web.post().uri("/actuator/breakwater/families/flights").contentType(MediaType.APPLICATION_JSON)
        .bodyValue(Map.of("state", "closed")).exchange()
        .expectStatus().isOk()
        .expectBody().jsonPath("$.state").isEqualTo("CLOSED");
    web.get().uri("/actuator/health/breakwater").exchange().expectStatus().isOk();

    web.post().uri("/actuator/breakwater/breakers/no.such.tool").contentType(MediaType.APPLICATION_JSON)
        .bodyValue(Map.of("state", "open")).exchange()
        .expectStatus().isBadRequest();
    web.post().uri("/actuator/breakwater/families/flights").contentType(MediaType.APPLICATION_JSON)
        .bodyValue(Map.of("state", "half-open")).exchange()
        .expectStatus().isBadRequest();
  }
}
