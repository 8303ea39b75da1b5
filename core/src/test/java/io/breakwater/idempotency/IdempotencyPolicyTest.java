package io.breakwater.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import java.util.Map;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/** What {@link IdempotencyPolicy.Builder#build()} accepts and refuses, to the edge of each bound. */
class IdempotencyPolicyTest {

  private final IdempotencyStore store = IdempotencyStore.inMemory();

  private IdempotencyPolicy.Builder policy() {
    return IdempotencyPolicy.builder(store);
  }

  @Test
  void everyDurationMustBePositive() {
    Map<String, BiFunction<IdempotencyPolicy.Builder, Duration, IdempotencyPolicy.Builder>> settings = Map.of(
        "ttl", IdempotencyPolicy.Builder::ttl,
        "lease", IdempotencyPolicy.Builder::lease,
        "pollInterval", IdempotencyPolicy.Builder::pollInterval,
        "storeTimeout", IdempotencyPolicy.Builder::storeTimeout);
    settings.forEach((name, setting) -> {
      for (Duration bad : new Duration[] {Duration.ZERO, Duration.ofSeconds(-1)}) {
        assertThatIllegalArgumentException().as(name + " " + bad)
            .isThrownBy(() -> setting.apply(policy(), bad).build())
            .withMessage(name + " is " + bad + ": give a positive duration");
      }
    });
  }

  @Test
  void aPollIntervalBelowOneMillisecondIsRefusedNotABusyLoopOfClaims() {
    // at 1 ns a waiting duplicate asked a store that cannot notify about 1 700 times in 200 ms
    assertThat(policy().pollInterval(Duration.ofMillis(1)).build().pollInterval()).isEqualTo(Duration.ofMillis(1));
    assertThatIllegalArgumentException().isThrownBy(() -> policy().pollInterval(Duration.ofNanos(999_999)).build())
        .withMessage("pollInterval is PT0.000999999S: give 1 ms or more (a waiting duplicate asks the store again "
            + "after each), e.g. 1 s");
  }

  @Test
  void aLeaseBelowThirtyMillisecondsIsRefusedNotABusyLoopOfRenewals() {
    assertThat(policy().lease(Duration.ofMillis(30)).build().lease()).isEqualTo(Duration.ofMillis(30));
    assertThatIllegalArgumentException().isThrownBy(() -> policy().lease(Duration.ofNanos(3_000)).build())
        .withMessage("lease is PT0.000003S: give 30 ms or more (a claim is renewed every third of it), e.g. 30 s");
  }

  @Test
  void aTtlOfExactlyTenYearsIsAcceptedAndAnyLongerRefused() {
    assertThat(policy().ttl(IdempotencyPolicy.MAX_TTL).build().ttl()).isEqualTo(IdempotencyPolicy.MAX_TTL);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> policy().ttl(IdempotencyPolicy.MAX_TTL.plusNanos(1)).build())
        .withMessageContaining("is over the maximum of 3650 days");
  }

  @Test
  void aResultOfOneByteIsTheSmallestLimit() {
    assertThat(policy().maxResultBytes(1).build().maxResultBytes()).isEqualTo(1);
    assertThatIllegalArgumentException().isThrownBy(() -> policy().maxResultBytes(0).build())
        .withMessage("maxResultBytes is 0: give a positive size");
  }

  @Test
  void theBoundOnBackgroundCompletionsIsKeptAndMayBeZeroButNotNegative() {
    assertThat(policy().build().maxBackgroundCompletions())
        .isEqualTo(IdempotencyPolicy.DEFAULT_MAX_BACKGROUND_COMPLETIONS);
    assertThat(policy().maxBackgroundCompletions(5).build().maxBackgroundCompletions()).isEqualTo(5);
    assertThat(policy().maxBackgroundCompletions(0).build().maxBackgroundCompletions()).isZero();
    assertThatIllegalArgumentException().isThrownBy(() -> policy().maxBackgroundCompletions(-1).build())
        .withMessageStartingWith("maxBackgroundCompletions is -1: give 0 or more");
  }

  @Test
  void aTtlAsLongAsTheLongestRetryWindowIsLongEnough() {
    Duration window = Duration.ofMinutes(10);

    assertThat(policy().ttl(window).longestRetryWindow(window).build().ttl()).isEqualTo(window);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> policy().ttl(window.minusNanos(1)).longestRetryWindow(window).build())
        .withMessageContaining("is shorter than the longest retry window 10m");
  }

  @Test
  void aLeaseOrWindowUpToTheLongestTtlIsNamedShortAndALongerOneInIso8601() {
    Duration hour = Duration.ofHours(1);

    assertThatIllegalArgumentException()
        .isThrownBy(() -> policy().ttl(hour).lease(IdempotencyPolicy.MAX_TTL).build())
        .withMessageContaining("shorter than the lease 87600h:");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> policy().ttl(hour).longestRetryWindow(IdempotencyPolicy.MAX_TTL.plusDays(1)).build())
        .withMessageContaining("shorter than the longest retry window PT87624H:");
  }
}
