package io.breakwater.internal.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
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
  void aRefusalByABuilderFailsTheStartUpNamingThePropertyInTheUsersTermsAndSayingWhatToChange() {
    assertThatThrownBy(() -> FromProperties.checked("breakwater.idempotency.lease", () -> {
      throw new IllegalArgumentException("lease is PT0.001S: give at least 30 ms");
    }))
        .isInstanceOf(InvalidPropertiesException.class)
        .hasMessage("breakwater.idempotency.lease: lease is 1ms: give at least 30 ms");
  }

  @Test
  void durationsAreWrittenInTheUnitsOfApplicationYml() {
    assertThat(UserTerms.of("openDuration of 'x' is PT-5S: give a positive duration")).isEqualTo(
        "openDuration of 'x' is -5s: give a positive duration");
    assertThat(UserTerms.of("a PT0.139947S wait, PT1H30M and PT-0.5S; not PTO or APT1S"))
        .isEqualTo("a 139947us wait, 90m and -500ms; not PTO or APT1S");
    assertThat(UserTerms.duration(Duration.ofSeconds(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE + "s");
    assertThat(UserTerms.duration(Duration.ZERO)).isEqualTo("0s");
  }
}
