package io.breakwater.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.internal.breaker.BreakerCore;
import java.lang.invoke.VarHandle;
import org.junit.jupiter.api.Test;

/** A handle reads the private field it names, and a field that is not there fails where the handle is made. */
class PrivateFieldsTest {

  @Test
  void aHandleReadsThePrivateFieldOfEachInstance() {
    VarHandle core = PrivateFields.handle(CircuitBreaker.class, "core", BreakerCore.class);
    CircuitBreaker opened = CircuitBreaker.ofDefaults("handle-opened");
    opened.forceOpen();

    assertThat(((BreakerCore) core.get(opened)).currentState()).isEqualTo(CircuitBreaker.State.OPEN);
    assertThat(((BreakerCore) core.get(CircuitBreaker.ofDefaults("handle-closed"))).currentState())
        .isEqualTo(CircuitBreaker.State.CLOSED);
  }

  @Test
  void aFieldThatIsNotThereFailsWhereTheHandleIsMade() {
    assertThatThrownBy(() -> PrivateFields.handle(CircuitBreaker.class, "renamed", BreakerCore.class))
        .isInstanceOf(ExceptionInInitializerError.class)
        .hasCauseInstanceOf(NoSuchFieldException.class);
    assertThatThrownBy(() -> PrivateFields.handle(CircuitBreaker.class, "core", Object.class))
        .isInstanceOf(ExceptionInInitializerError.class)
        .hasCauseInstanceOf(NoSuchFieldException.class);
  }
}
