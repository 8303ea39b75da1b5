package io.breakwater.issues;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.breaker.CircuitBreaker.State;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.testing.LateScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Issue 37, item 1: a cold-start soak with every setting at its default opened breakers against a healthy server.
 * The client's process was starved (a cold JVM on a saturated CPU: timers on {@code Schedulers.parallel()} fired
 * seconds late), so per-call timeouts fired late and counted as the dependency's failures. Breakers built with the
 * defaults now take a timeout whose own timer fired late for our starvation ({@code local_overload}), with no probe
 * to wire. Replayed in virtual time, where the timers run late by a set lag.
 */
class LateTimersOpenedDefaultBreakersTest {

  final VirtualTimeScheduler clock = VirtualTimeScheduler.getOrSet();
  final LateScheduler ours = new LateScheduler(clock);

  @AfterEach
  void resetSchedulers() {
    VirtualTimeScheduler.reset();
  }

  /** 40 calls of a tool that never answers, its per-call timer on {@code ours}, everything else by default. */
  List<ToolOutcome<String>> callsThatTimeOut(CircuitBreakerRegistry breakers) {
    Tool<String, String> tool = Tool.of(ToolDescriptor.builder("mail.search").sideEffect(SideEffect.READ_ONLY)
            .timeouts(CallTimeouts.fixed(Duration.ofSeconds(1))).breakers(breakers).scheduler(() -> ours)
            .eventLog(e -> { }).build(),
        (String q) -> Mono.<String>never(), String.class)
        .withFallbacks(Fallbacks.<String, String>builder().orDefault("none").build());
    List<ToolOutcome<String>> outcomes = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      tool.outcome("q" + i).subscribe(outcomes::add);
    }
    clock.advanceTimeBy(Duration.ofMinutes(2));
    assertThat(outcomes).as("every call ended").hasSize(40);
    return outcomes;
  }

  @Test
  void timeoutsWhoseTimersFireLateOpenNoBreakerBuiltWithTheDefaults() {
    ours.lag(Duration.ofMillis(500));   // our timers fire 500 ms late: the process is starved
    CircuitBreakerRegistry breakers = CircuitBreakerRegistry.ofDefaults();
    callsThatTimeOut(breakers);
    assertThat(breakers.breaker("mail.search").state()).isEqualTo(State.CLOSED);
    assertThat(breakers.family("mail.search").orElseThrow().state()).isEqualTo(State.CLOSED);
    assertThat(breakers.breaker("mail.search").snapshot().failedCalls()).isZero();
  }

  @Test
  void timeoutsWhoseTimersFireOnTimeStillOpenThem() {
    CircuitBreakerRegistry breakers = CircuitBreakerRegistry.ofDefaults();
    callsThatTimeOut(breakers);
    assertThat(breakers.breaker("mail.search").state()).isNotEqualTo(State.CLOSED);
  }
}
