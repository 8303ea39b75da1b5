package io.breakwater.internal.breaker;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The guard reaches a breaker's state machine, and nothing outside the breaker and its guard can change which. */
class BreakerCoreAccessTest {

  @Test
  void noPublicStaticHookCanRebindHowABreakerReachesItsCore() {
    assertThat(Arrays.stream(BreakerCore.class.getDeclaredMethods())
        .filter(m -> Modifier.isPublic(m.getModifiers()) && Modifier.isStatic(m.getModifiers()))
        .map(Method::toGenericString))
        .isEmpty();
  }

  @Test
  void eachBreakerIsGuardedByItsOwnCore() {
    CircuitBreaker opened = CircuitBreaker.ofDefaults("opened");
    CircuitBreaker closed = CircuitBreaker.ofDefaults("closed");
    opened.forceOpen();

    assertThat(BreakerCore.of(opened).currentState()).isEqualTo(CircuitBreaker.State.OPEN);
    assertThat(BreakerCore.of(closed).currentState()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(BreakerCore.of(opened)).isSameAs(BreakerCore.of(opened)).isNotSameAs(BreakerCore.of(closed));
    assertThat(GuardOperator.of(opened)).isSameAs(GuardOperator.of(opened));
  }
}
