package io.breakwater.examples.cookbook;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.deadline.DeadlineHeader;
import io.breakwater.examples.travel.ScriptedToolServer;
import io.breakwater.examples.travel.TravelAgent.Deposit;
import io.breakwater.examples.zombies.WalkAwayServer;
import io.breakwater.examples.zombies.ZombieCheck;
import io.breakwater.idempotency.IdempotencyStore;
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

/** The Reactor Netty recipe against the scripted tool server on loopback. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ReactorNettyToolsIT {

  private final ScriptedToolServer server = new ScriptedToolServer();
  private final ReactorNettyTools tools = new ReactorNettyTools(ReactorNettyTools.client("127.0.0.1", server.port()),
      CircuitBreaker.ofDefaults("travel"), WebClientTools.retryPolicy(), IdempotencyStore.inMemory());

  @AfterEach
  void stop() {
    server.close();
  }

  private static long nowNanos() {
    return Schedulers.parallel().now(TimeUnit.NANOSECONDS);
  }

  @Test
  void aStalledAttemptIsCutAtItsBudgetItsConnectionClosedAndTheRetryAnswers() throws InterruptedException {
    long start = nowNanos();
    String flights = tools.get("/flights").block(Duration.ofSeconds(15));
    Duration took = Duration.ofNanos(nowNanos() - start);

    assertThat(flights).contains("BW456");
    assertThat(server.flightRequests()).isEqualTo(2);
    // the first attempt was cut at 2 s, not left to the server's 28 s stall
    assertThat(took).isBetween(Duration.ofSeconds(2), Duration.ofSeconds(5));
    // the server saw the stalled request's connection close (it learns of it asynchronously)
    for (int i = 0; i < 100 && server.stalledRequestsCancelled() == 0; i++) {
      Thread.sleep(20);
    }
    assertThat(server.stalledRequestsCancelled()).isEqualTo(1);
  }

  @Test
  void theRequestCarriesItsAttemptBudgetNotTheTasks() {
    tools.deposit(new Deposit("booking-1", 10)).block(Duration.ofSeconds(15));

    // the task has 10 s, the attempt at most 2 s: the server is told 2 s
    assertThat(server.deadlineHeaders()).hasSize(1)
        .allSatisfy(value -> assertThat(Duration.ofNanos(DeadlineHeader.parse(value)))
            .isBetween(Duration.ofMillis(1_500), Duration.ofSeconds(2)));
  }

  @Test
  void aRateLimitIsMappedSoThatItsRetryAfterIsHonoured() {
    long start = nowNanos();
    String hotels = tools.get("/hotels").block(Duration.ofSeconds(15));

    assertThat(hotels).contains("Casa Breakwater");
    assertThat(server.hotelRequests()).isEqualTo(2);
    assertThat(Duration.ofNanos(nowNanos() - start)).isBetween(Duration.ofSeconds(1), Duration.ofMillis(4_500));
  }

  @Test
  void aDuplicatedPaymentIsChargedOnceAndTheKeyReachesTheApi() {
    Deposit deposit = new Deposit("booking-7", 50);
    String first = tools.deposit(deposit).block(Duration.ofSeconds(15));
    String second = tools.deposit(deposit).block(Duration.ofSeconds(15));

    assertThat(second).isEqualTo(first);
    assertThat(server.charges()).isEqualTo(1);
    assertThat(server.idempotencyKeys()).singleElement().satisfies(sent -> {
      assertThat(sent).as("the key's keyed form, never the plain key").matches("[0-9a-f]{64}");
      assertThat(server.chargesFor(sent)).isEqualTo(1);
    });
  }

  /** 2 s for a first event, then 1 s between events. */
  private static final StreamTimeouts EVENT_TIMEOUTS = StreamTimeouts.builder()
      .firstItem(Duration.ofSeconds(2)).idle(Duration.ofSeconds(1)).build();

  private static ReactorNettyTools tools(WalkAwayServer walkAway) {
    return new ReactorNettyTools(ReactorNettyTools.client("127.0.0.1", walkAway.port()), CircuitBreaker.ofDefaults("events"),
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
