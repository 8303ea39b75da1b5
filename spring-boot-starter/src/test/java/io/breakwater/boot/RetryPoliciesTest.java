package io.breakwater.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.retry.RetryPolicy;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** Policies built from the defaults are bounded: a name taken from user data cannot grow them without limit. */
class RetryPoliciesTest {

  private final Function<String, RetryPolicy> defaults = name -> RetryPolicy.builder().name(name).build();

  @Test
  void policiesBuiltFromTheDefaultsStopAtTheirBoundAndConfiguredOnesDoNotCount() {
    RetryPolicies policies = new RetryPolicies(Map.of("flights", defaults.apply("flights")), defaults, 2);
    policies.policy("hotels");
    policies.policy("cars");
    assertThat(policies.policy("hotels")).as("a policy already built").isSameAs(policies.policy("hotels"));
    assertThat(policies.policy("flights").name()).isEqualTo("flights");
    assertThatThrownBy(() -> policies.policy("user-42")).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("2 policies").hasMessageContaining("closed set");
    assertThat(policies.names()).containsExactlyInAnyOrder("flights", "hotels", "cars");
  }

  @Test
  void twentyThousandNamesDoNotBuildTwentyThousandPolicies() {
    RetryPolicies policies = new RetryPolicies(Map.of(), defaults);
    int refused = 0;
    for (int i = 0; i < 20_000; i++) {
      try {
        policies.policy("user-" + i);
      } catch (IllegalStateException bounded) {
        refused++;
      }
    }
    assertThat(policies.names()).hasSize(RetryPolicies.DEFAULT_MAX_POLICIES);
    assertThat(refused).isEqualTo(20_000 - RetryPolicies.DEFAULT_MAX_POLICIES);
  }

  @Test
  void aBoundBelowOneIsRefused() {
    assertThatThrownBy(() -> new RetryPolicies(Map.of(), defaults, 0)).hasMessageContaining("maxPolicies is 0");
  }
}
