package io.breakwater.internal.boot;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class FromPropertiesTest {

  @Test
  void anOverflowWhileBuildingFromAPropertyFailsTheStartUpNamingTheProperty() {
    assertThatThrownBy(() -> FromProperties.checked("breakwater.deadline.inbound.max", () -> {
      throw new ArithmeticException("long overflow");
    }))
        .isInstanceOf(InvalidPropertiesException.class)
        .hasMessage("breakwater.deadline.inbound.max: a value too large to compute with (long overflow): give a "
            + "smaller one")
        .hasCauseInstanceOf(ArithmeticException.class);
  }

  @Test
  void aRefusalByABuilderFailsTheStartUpNamingThePropertyAndSayingWhatToChange() {
    assertThatThrownBy(() -> FromProperties.checked("breakwater.idempotency.lease", () -> {
      throw new IllegalArgumentException("lease is PT0.001S: give at least 30 ms");
    }))
        .isInstanceOf(InvalidPropertiesException.class)
        .hasMessage("breakwater.idempotency.lease: lease is PT0.001S: give at least 30 ms");
  }
}
