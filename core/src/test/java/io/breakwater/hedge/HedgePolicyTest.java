package io.breakwater.hedge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class HedgePolicyTest {

  @Test
  void theDefaultsAreAP95HedgeOnceWithinTenPercent() {
    HedgePolicy policy = HedgePolicy.builder().build();
    assertThat(policy.name()).isEqualTo("default");
    assertThat(policy.delay()).isEmpty();
    assertThat(policy.delayPercentile()).isEqualTo(95.0);
    assertThat(policy.maxHedges()).isEqualTo(1);
    assertThat(policy.budget()).isEqualTo(0.1);
    assertThat(policy.currentDelay()).as("warming up").isEmpty();
    assertThat(policy).hasToString("HedgePolicy{default, delay=p95.0, maxHedges=1, budget=0.1}");
  }

  @Test
  void aFixedDelayReplacesThePercentileAndTheOtherWayRound() {
    HedgePolicy fixed = HedgePolicy.builder().delayPercentile(99).delay(Duration.ofMillis(250)).build();
    assertThat(fixed.delay()).contains(Duration.ofMillis(250));
    assertThat(fixed.delayPercentile()).isZero();
    assertThat(fixed.currentDelay()).contains(Duration.ofMillis(250));
    HedgePolicy adaptive = HedgePolicy.builder().delay(Duration.ofMillis(250)).delayPercentile(99).build();
    assertThat(adaptive.delay()).isEmpty();
    assertThat(adaptive.delayPercentile()).isEqualTo(99);
  }

  @Test
  void badSettingsAreRefusedWithWhatToChange() {
    assertRefused(HedgePolicy.builder().name(" "), "name it after the dependency");
    assertRefused(HedgePolicy.builder().delay(Duration.ZERO), "give a positive duration up to 1 h");
    assertRefused(HedgePolicy.builder().delay(Duration.ofMillis(-1)), "give a positive duration up to 1 h");
    assertRefused(HedgePolicy.builder().delay(Duration.ofSeconds(Long.MAX_VALUE)), "up to 1 h");
    assertRefused(HedgePolicy.builder().delayPercentile(0), "(0, 100]");
    assertRefused(HedgePolicy.builder().delayPercentile(100.5), "(0, 100]");
    assertRefused(HedgePolicy.builder().delayPercentile(Double.NaN), "(0, 100]");
    assertRefused(HedgePolicy.builder().maxHedges(0), "give 1 to 10");
    assertRefused(HedgePolicy.builder().maxHedges(11), "give 1 to 10");
    assertRefused(HedgePolicy.builder().budget(0), "(0, 1]");
    assertRefused(HedgePolicy.builder().budget(1.01), "(0, 1]");
    assertRefused(HedgePolicy.builder().budget(Double.NaN), "(0, 1]");
  }

  @Test
  void theLimitsThemselvesAreAccepted() {
    HedgePolicy.builder().delay(Duration.ofHours(1)).maxHedges(10).budget(1).build();
    HedgePolicy.builder().delay(Duration.ofNanos(1)).budget(Double.MIN_VALUE).delayPercentile(100).build();
  }

  private static void assertRefused(HedgePolicy.Builder builder, String advice) {
    assertThatThrownBy(builder::build).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(advice);
  }
}
