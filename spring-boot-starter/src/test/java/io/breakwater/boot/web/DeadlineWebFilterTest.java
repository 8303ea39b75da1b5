package io.breakwater.boot.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.breakwater.boot.DeadlineDefaults;
import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

class DeadlineWebFilterTest {

  private static final String HEADER = "Breakwater-Timeout";

  private final AtomicInteger handlerCalls = new AtomicInteger();
  private final AtomicReference<Deadline> seen = new AtomicReference<>();

  /** A handler that records the deadline in its Context and then takes {@code work} to answer. */
  private WebFilterChain handler(Duration work, VirtualTimeScheduler clock) {
    return exchange -> Mono.deferContextual(ctx -> {
      handlerCalls.incrementAndGet();
      seen.set(Deadline.from(ctx).orElse(null));
      return Mono.delay(work, clock).then();
    });
  }

  private static DeadlineWebFilter filter(VirtualTimeScheduler clock, Duration defaultBudget) {
    DeadlineDefaults deadlines = new DeadlineDefaults(DeadlineSpec.builder(Duration.ofSeconds(1))
        .scheduler(() -> clock).perCallFraction(0.5).build());
    return new DeadlineWebFilter(HEADER, Duration.ofMinutes(5), defaultBudget, deadlines);
  }

  private static MockServerWebExchange exchange(String... values) {
    MockServerHttpRequest.BaseBuilder<?> request = MockServerHttpRequest.get("/forecast");
    if (values.length > 0) {
      request.header(HEADER, values);
    }
    return MockServerWebExchange.from(request);
  }

  private static String body(MockServerWebExchange exchange) {
    return exchange.getResponse().getBodyAsString().block(Duration.ofSeconds(1));
  }

  @Test
  void handlerRunsUnderTheDeadlineTheHeaderCarriesWithTheConfiguredRatios() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    MockServerWebExchange exchange = exchange("2500m");
    StepVerifier.create(filter(clock, null).filter(exchange, handler(Duration.ofMillis(100), clock)))
        .then(() -> clock.advanceTimeBy(Duration.ofMillis(100)))
        .verifyComplete();
    assertThat(seen.get().budget()).isEqualTo(Duration.ofMillis(2500));
    assertThat(seen.get().spec().perCallFraction()).isEqualTo(0.5);
    assertThat(exchange.getResponse().getStatusCode()).isNull();
  }

  @Test
  void expiredOnArrivalIsAnswered504WithoutCallingTheHandler() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    MockServerWebExchange exchange = exchange("0n");
    StepVerifier.create(filter(clock, null).filter(exchange, handler(Duration.ZERO, clock))).verifyComplete();
    assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.GATEWAY_TIMEOUT);
    assertThat(handlerCalls).hasValue(0);
  }

  @Test
  void malformedHeaderIsAnswered400InPlainTextWithoutEchoingTheValue() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    for (String hostile : new String[] {"12", "abc", "123456789S", "-5S", "5s", "<script>alert(1)</script>",
        "1S\r\nSet-Cookie: x=1", "99999999999999999999H"}) {
      MockServerWebExchange exchange = exchange(hostile);
      StepVerifier.create(filter(clock, null).filter(exchange, handler(Duration.ZERO, clock))).verifyComplete();
      assertThat(exchange.getResponse().getStatusCode()).as(hostile).isEqualTo(HttpStatus.BAD_REQUEST);
      assertThat(exchange.getResponse().getHeaders().getContentType())
          .isEqualTo(new MediaType(MediaType.TEXT_PLAIN, StandardCharsets.UTF_8));
      assertThat(body(exchange)).as(hostile).doesNotContain(hostile).contains("e.g. 2500m");
    }
    assertThat(handlerCalls).hasValue(0);
  }

  @Test
  void moreThanOneHeaderIsAnswered400() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    MockServerWebExchange exchange = exchange("1S", "10S");
    StepVerifier.create(filter(clock, null).filter(exchange, handler(Duration.ZERO, clock))).verifyComplete();
    assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);
    assertThat(handlerCalls).hasValue(0);
  }

  @Test
  void handlerStillRunningAtTheDeadlineIsCancelledAndAnswered504() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    MockServerWebExchange exchange = exchange("1S");
    StepVerifier.create(filter(clock, null).filter(exchange, handler(Duration.ofSeconds(10), clock)))
        .then(() -> clock.advanceTimeBy(Duration.ofMillis(999)))
        .expectNoEvent(Duration.ZERO)
        .then(() -> clock.advanceTimeBy(Duration.ofMillis(1)))
        .verifyComplete();
    assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.GATEWAY_TIMEOUT);
    assertThat(body(exchange)).contains("inbound " + HEADER);
  }

  @Test
  void aMaxOfForeverHonoursTheLongestHeaderInsteadOfFailingConstruction() {
    // ChronoUnit.FOREVER.getDuration(), or breakwater.deadline.inbound.max=2562047788015215h: "no maximum"
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    DeadlineDefaults deadlines = new DeadlineDefaults(DeadlineSpec.builder(Duration.ofSeconds(1))
        .scheduler(() -> clock).build());
    DeadlineWebFilter filter = new DeadlineWebFilter(HEADER, Duration.ofSeconds(Long.MAX_VALUE), null, deadlines);
    StepVerifier.create(filter.filter(exchange("2000000H"), handler(Duration.ZERO, clock)))   // 228 years
        .expectSubscription()
        .verifyComplete();
    assertThat(seen.get().budget()).isEqualTo(Duration.ofHours(2_000_000));
  }

  @Test
  void deadlineLongerThanTheMaxIsCutToIt() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    StepVerifier.create(filter(clock, null).filter(exchange("99999999H"), handler(Duration.ZERO, clock)))
        .verifyComplete();
    assertThat(seen.get().budget()).isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void requestWithoutTheHeaderRunsUnderTheDefaultBudgetAndNeverUnbounded() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    StepVerifier.create(filter(clock, null).filter(exchange(), handler(Duration.ZERO, clock))).verifyComplete();
    assertThat(seen.get()).as("a client cannot skip the cap by leaving the header out").isNotNull();
    assertThat(seen.get().budget()).isEqualTo(DeadlineWebFilter.DEFAULT_BUDGET).isEqualTo(Duration.ofSeconds(30));

    StepVerifier.create(filter(clock, Duration.ofSeconds(7)).filter(exchange(), handler(Duration.ZERO, clock)))
        .verifyComplete();
    assertThat(seen.get().budget()).isEqualTo(Duration.ofSeconds(7));

    StepVerifier.create(filter(clock, Duration.ofDays(1)).filter(exchange(), handler(Duration.ZERO, clock)))
        .verifyComplete();
    assertThat(seen.get().budget()).as("cut to max, as a header's is").isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void aRequestWithoutTheHeaderStillRunningAtTheDefaultBudgetIsCancelledAndAnswered504() {
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    MockServerWebExchange exchange = exchange();
    StepVerifier.create(filter(clock, null).filter(exchange, handler(Duration.ofHours(1), clock)))
        .then(() -> clock.advanceTimeBy(Duration.ofSeconds(31)))
        .verifyComplete();
    assertThat(exchange.getResponse().getStatusCode().value()).isEqualTo(504);
  }

  @Test
  void settingsAreValidated() {
    DeadlineDefaults deadlines = new DeadlineDefaults(DeadlineSpec.of(Duration.ofSeconds(1)));
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new DeadlineWebFilter(HEADER, Duration.ZERO, null, deadlines))
        .withMessageContaining("max is PT0S");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new DeadlineWebFilter(HEADER, Duration.ofMinutes(1), Duration.ofSeconds(-1), deadlines))
        .withMessageContaining("defaultBudget");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> new DeadlineWebFilter(" ", Duration.ofMinutes(1), null, deadlines))
        .withMessageContaining("header name is blank");
  }
}
