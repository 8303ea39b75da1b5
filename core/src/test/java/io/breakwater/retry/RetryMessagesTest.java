package io.breakwater.retry;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The messages of a retry that gave up name what the user named and say what each duration is. */
class RetryMessagesTest {

  private static final Instant T0 = Instant.EPOCH;

  @Test
  void aGiveUpNamesThePolicyAsAPolicyAndTheCalledToolWhenItsFailureNamesIt() {
    CallTimeoutException timeout = new CallTimeoutException("weather.forecast", Duration.ofSeconds(2),
        Duration.ofSeconds(2));
    RetryExhaustedException e = new RetryExhaustedException("default", RetryStopReason.MAX_RETRIES, List.of(
        new RetryAttempt(1, FailureKind.SERVER_ERROR, Duration.ZERO, T0, new HttpStatusException(503)),
        new RetryAttempt(2, FailureKind.TIMEOUT, Duration.ofNanos(139_947_000), T0.plusMillis(2140), timeout)));
    assertThat(e.getMessage()).isEqualTo("Retry policy 'default' gave up on calls to 'weather.forecast' after 2 "
        + "attempts: " + RetryStopReason.MAX_RETRIES.describe() + "\n"
        + "  #1 failed with server_error at 1970-01-01T00:00:00Z: io.breakwater.failure.HttpStatusException: HTTP 503\n"
        + "  #2 (sent after a 139.947ms backoff) failed with timeout at 1970-01-01T00:00:02.140Z: "
        + "io.breakwater.deadline.CallTimeoutException: Call 'weather.forecast' timed out after running 2s (its "
        + "per-call time limit: 2s)");
  }

  @Test
  void aGiveUpWhoseFailuresNameNothingNamesOnlyThePolicy() {
    RetryExhaustedException e = new RetryExhaustedException("flights", RetryStopReason.MAX_RETRIES, List.of(
        new RetryAttempt(1, FailureKind.SERVER_ERROR, Duration.ZERO, T0, new HttpStatusException(503))));
    assertThat(e.getMessage()).startsWith("Retry policy 'flights' gave up after 1 attempt: ");
  }

  @Test
  void aTimeoutOfAnUnnamedCallSaysACall() {
    assertThat(new CallTimeoutException("per-call", Duration.ofMillis(1200), Duration.ofMillis(1200)))
        .hasMessage("A call timed out after running 1.2s (its per-call time limit: 1.2s)");
  }
}
