package io.breakwater.internal.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.RemainingBudget;
import io.breakwater.agent.ToolFailure;
import io.breakwater.breaker.CircuitBreakerOpenException;
import io.breakwater.failure.FailureKind;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class FailureAdviceTest {

  private static ToolFailure advice(Throwable error) {
    return FailureAdvice.of("weather.forecast", List.of(), error, FailureKind.CIRCUIT_OPEN,
        FailureAdvice.reason(error), RemainingBudget.UNBOUNDED);
  }

  @Test
  void theModelIsToldABreakerRampingUpIsNotOpen() {
    ToolFailure rampingUp = advice(CircuitBreakerOpenException.rampingUp("weather.forecast", 0.25));
    assertThat(rampingUp.reason()).isEqualTo("circuit breaker 'weather.forecast' is ramping up after recovery and "
        + "held this call back");
    assertThat(rampingUp.render()).doesNotContain("is open").doesNotContain("until it recovers");
    assertThat(rampingUp.next().get(0)).startsWith("call weather.forecast again in a moment");
  }

  @Test
  void theModelIsToldAnOpenBreakerIsOpen() {
    ToolFailure open = advice(CircuitBreakerOpenException.open("weather.forecast", Duration.ofSeconds(20)));
    assertThat(open.reason()).isEqualTo("circuit breaker 'weather.forecast' is open");
    assertThat(open.avoid()).containsExactly("calling weather.forecast until it recovers");
  }
}
