package io.breakwater.examples.cookbook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.Breakwater;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerOpenException;
import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.examples.travel.ScriptedToolServer;
import io.breakwater.examples.travel.TravelAgent.Deposit;
import io.breakwater.examples.zombies.WalkAwayServer;
import io.breakwater.examples.zombies.ZombieCheck;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.stream.StreamTimeouts;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.scheduler.Schedulers;

/** The WebClient recipe against the scripted tool server on loopback. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WebClientToolsIT {

  private final ScriptedToolServer server = new ScriptedToolServer();
  private final CircuitBreaker breaker = CircuitBreaker.builder("travel").minimumCalls(3).build();
  private final WebClientTools tools = new WebClientTools(
      WebClientTools.client("http://127.0.0.1:" + server.port()), breaker, WebClientTools.retryPolicy(),
      IdempotencyStore.inMemory());

  @AfterEach
  void stop() {
    server.close();
  }

  private static long nowNanos() {
    return Schedulers.parallel().now(TimeUnit.NANOSECONDS);
  }

  @Test
  void aRateLimitIsRetriedAfterItsRetryAfter() {
    long start = nowNanos();
    String hotels = tools.get("/hotels").block(Duration.ofSeconds(15));
    Duration took = Duration.ofNanos(nowNanos() - start);

    assertThat(hotels).contains("Casa Breakwater");
    assertThat(server.hotelRequests()).isEqualTo(2);
    // Retry-After: 1 was read (the wait for a 429 without one is at least 5 s)
    assertThat(took).isBetween(Duration.ofSeconds(1), Duration.ofMillis(4_500));
  }

  @Test
  void eachAttemptSendsItsOwnTimeLeft() {
    tools.get("/hotels").block(Duration.ofSeconds(15));

    assertThat(server.deadlineHeaders()).hasSize(2);
    long first = DeadlineHeader.parse(server.deadlineHeaders().get(0));
    long second = DeadlineHeader.parse(server.deadlineHeaders().get(1));
    // the per-call budget of a 10 s deadline is 6 s; the second attempt starts after the 1 s Retry-After
    assertThat(Duration.ofNanos(first)).isBetween(Duration.ofSeconds(5), Duration.ofSeconds(6));
    assertThat(Duration.ofNanos(second)).isLessThan(Duration.ofNanos(first)).isGreaterThan(Duration.ZERO);
  }

  @Test
  void underATighterTaskDeadlineAStalledAttemptIsCancelledAndItsConnectionClosed() throws InterruptedException {
    // an agent task with 4 s left calls the tool: the tool's own 10 s deadline cannot loosen it, so the first
    // attempt gets 2.4 s, and 1.6 s remain for a backoff of at most 1 s and a second attempt of at least 0.4 s (the
    // policy's minAttemptShare of the task's 4 s: with 3 s, a backoff over 0.9 s would leave too little, at random)
    String flights = tools.get("/flights").transformDeferred(Breakwater.withDeadline(Duration.ofSeconds(4)))
        .block(Duration.ofSeconds(15));

    assertThat(flights).contains("BW456");
    assertThat(server.flightRequests()).isEqualTo(2);
    assertThat(DeadlineHeader.parse(server.deadlineHeaders().get(0))).isLessThanOrEqualTo(2_400_000_000L);
    for (int i = 0; i < 100 && server.stalledRequestsCancelled() == 0; i++) {
      Thread.sleep(20);
    }
    assertThat(server.stalledRequestsCancelled()).isEqualTo(1);
  }

  @Test
  void aDuplicatedPaymentIsChargedOnceAndTheKeyReachesTheApi() {
    Deposit deposit = new Deposit("booking-42", 50);
    String first = tools.deposit(deposit).block(Duration.ofSeconds(15));
    String second = tools.deposit(deposit).block(Duration.ofSeconds(15));

    assertThat(second).isEqualTo(first);
    assertThat(server.charges()).isEqualTo(1);
    assertThat(server.idempotencyKeys()).singleElement().satisfies(sent -> {
      assertThat(sent).as("the key's keyed form, never the plain key").matches("[0-9a-f]{64}");
      assertThat(server.chargesFor(sent)).isEqualTo(1);
    });
  }

  @Test
  void aBurstOf503sOpensTheBreakerAndTheNextCallNeverReachesTheServer() {
    assertThatThrownBy(() -> tools.get("/attractions").block(Duration.ofSeconds(15)))
        .isInstanceOf(RetryExhaustedException.class)
        .hasRootCauseInstanceOf(HttpStatusException.class);
    assertThat(server.attractionRequests()).isEqualTo(3);
    assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);

    assertThatThrownBy(() -> tools.get("/attractions").block(Duration.ofSeconds(15)))
        .isInstanceOf(CircuitBreakerOpenException.class);
    assertThat(server.attractionRequests()).isEqualTo(3);
  }

  /** 2 s for a first event, then 1 s between events. */
  private static final StreamTimeouts EVENT_TIMEOUTS = StreamTimeouts.builder()
      .firstItem(Duration.ofSeconds(2)).idle(Duration.ofSeconds(1)).build();

  private static WebClientTools tools(WalkAwayServer walkAway) {
    return new WebClientTools(WebClientTools.client(walkAway.baseUrl()), CircuitBreaker.ofDefaults("events"),
        WebClientTools.retryPolicy(), IdempotencyStore.inMemory());
  }

  @BeforeAll
  static void warmUp() {
    ZombieCheck.warmUp(walkAway -> tools(walkAway).events("/events", StreamTimeouts.builder().firstItem(Duration.ofMinutes(1)).build()));
  }

  @ParameterizedTest
  @EnumSource(WalkAwayServer.Stall.class)
  void twentyStalledEventStreamsAreAllClosedWithinOneSecondOfTheirTimeout(WalkAwayServer.Stall stall)
      throws InterruptedException {
    // non-blocking: no thread is held by a stream, so there is no thread to look for
    ZombieCheck.everyStalledStreamIsClosed(stall, walkAway -> tools(walkAway).events("/events", EVENT_TIMEOUTS));
  }
}
