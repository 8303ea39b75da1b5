package io.breakwater.breaker;

import static io.breakwater.breaker.Calls.fail;
import static io.breakwater.breaker.Calls.failTimes;
import static io.breakwater.breaker.Calls.on;
import static io.breakwater.breaker.Calls.succeed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.breakwater.breaker.CircuitBreaker.State;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

/** What operators use: forcing a breaker open or closed, reading its window, listing a registry's breakers. */
class OperatorControlsTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

  private CircuitBreaker breaker() {
    return on(clock, "search").minimumCalls(4).failureRateThreshold(0.5).openDuration(Duration.ofSeconds(30))
        .build();
  }

  @Test
  void forcedOpenRejectsEveryCallPastTheOpenDurationUntilForcedClosed() {
    CircuitBreaker b = breaker();
    b.forceOpen();
    assertThat(b.state()).isEqualTo(State.OPEN);
    clock.advanceTimeBy(Duration.ofDays(365));
    assertThat(b.state()).as("no probe after any open duration").isEqualTo(State.OPEN);
    Throwable rejected = succeed(b);
    assertThat(rejected).isInstanceOf(CircuitBreakerOpenException.class)
        .hasMessageContaining("forced open by an operator");

    b.forceClosed();
    assertThat(b.state()).isEqualTo(State.CLOSED);
    assertThat(succeed(b)).as("full traffic at once, no ramp-up").isNull();
  }

  /** A rejection's untilProbe counts down as time passes, for a breaker forced open too. */
  @Test
  void aForcedOpenBreakersRejectionsCountDownTheirUntilProbe() {
    CircuitBreaker b = breaker();
    b.forceOpen();
    Duration first = ((CircuitBreakerOpenException) succeed(b)).untilProbe();
    clock.advanceTimeBy(Duration.ofDays(1));
    Duration later = ((CircuitBreakerOpenException) succeed(b)).untilProbe();
    assertThat(later).isEqualTo(first.minus(Duration.ofDays(1)));
  }

  @Test
  void forcedClosedEndsAnOpenBreakerWithAnEmptyWindow() {
    CircuitBreaker b = breaker();
    failTimes(b, 4);
    assertThat(b.state()).isEqualTo(State.OPEN);
    b.forceClosed();
    assertThat(b.state()).isEqualTo(State.CLOSED);
    assertThat(b.snapshot().calls()).isZero();
    failTimes(b, 3);
    assertThat(b.state()).as("the old failures are gone: 3 calls are below minimumCalls").isEqualTo(State.CLOSED);
  }

  @Test
  void forcingPublishesTransitionsAndForcingTheSameStateAgainDoesNothing() {
    CircuitBreaker b = breaker();
    List<StateTransition> seen = new CopyOnWriteArrayList<>();
    Disposable watching = b.transitions().subscribe(seen::add);
    b.forceOpen();
    b.forceOpen();
    b.forceClosed();
    b.forceClosed();
    watching.dispose();
    assertThat(seen).extracting(StateTransition::from, StateTransition::to).containsExactly(
        org.assertj.core.groups.Tuple.tuple(State.CLOSED, State.OPEN),
        org.assertj.core.groups.Tuple.tuple(State.OPEN, State.CLOSED));
  }

  @Test
  void snapshotReportsTheWindowsRatesAndKeepsThemWhileOpen() {
    CircuitBreaker b = breaker();
    succeed(b);
    fail(b);
    succeed(b);
    CircuitBreaker.Snapshot three = b.snapshot();
    assertThat(three.state()).isEqualTo(State.CLOSED);
    assertThat(three.calls()).isEqualTo(3);
    assertThat(three.failedCalls()).isEqualTo(1);
    assertThat(three.failureRate()).isCloseTo(1.0 / 3, within(1e-9));
    assertThat(three.slowCallRate()).isZero();

    fail(b);
    CircuitBreaker.Snapshot open = b.snapshot();
    assertThat(open.state()).isEqualTo(State.OPEN);
    assertThat(open.calls()).isEqualTo(4);
    assertThat(open.failureRate()).isEqualTo(0.5);

    clock.advanceTimeBy(Duration.ofMinutes(2));
    assertThat(b.snapshot().calls()).as("the calls aged out of the 60 s window").isZero();
    assertThat(b.snapshot().state()).as("reading a snapshot does not half-open the breaker").isEqualTo(State.OPEN);
  }

  @Test
  void snapshotCountsSlowCalls() {
    CircuitBreaker b = on(clock, "slow").slowCall(Duration.ofSeconds(1), 0.9).build();
    Calls.outcome(b, reactor.core.publisher.Mono.just("late").delayElement(Duration.ofSeconds(2), clock));
    clock.advanceTimeBy(Duration.ofSeconds(2));
    succeed(b);
    CircuitBreaker.Snapshot s = b.snapshot();
    assertThat(s.calls()).isEqualTo(2);
    assertThat(s.slowCalls()).isEqualTo(1);
    assertThat(s.slowCallRate()).isEqualTo(0.5);
  }

  @Test
  void registryListsTheToolAndFamilyBreakersItCreated() {
    CircuitBreakerRegistry registry = CircuitBreakerRegistry.builder()
        .breakers(name -> on(clock, name).build())
        .build();
    assertThat(registry.toolBreakers()).isEmpty();
    registry.guard("gmail.send");
    CircuitBreaker slack = registry.familyBreaker("slack");

    assertThat(registry.toolBreakers()).containsOnlyKeys("gmail.send");
    assertThat(registry.familyBreakers()).containsOnlyKeys("gmail", "slack");
    assertThat(registry.family("slack.post")).containsSame(slack);
    assertThat(registry.familyBreakers().get("gmail")).isSameAs(registry.family("gmail.list").orElseThrow());
  }
}
