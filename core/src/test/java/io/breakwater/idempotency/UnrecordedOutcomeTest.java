package io.breakwater.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How an outcome that could not be stored is told: by default a warning in the log ({@link UnrecordedLog}, which
 * writes through SLF4J's simple logger to standard error, captured here), and by its {@code toString()}. Either
 * names the key by its tag and the last error by its class, never by its message.
 */
class UnrecordedOutcomeTest {

  private static final String TAG = "default:payments.refund:#0a1b2c3d";

  private final IdempotencyKey key = IdempotencyKey.explicit("payments.refund", "order-42", Map.of("amount", 30));
  private final ByteArrayOutputStream log = new ByteArrayOutputStream();
  private PrintStream originalErr;

  @BeforeEach
  void captureTheLog() {
    originalErr = System.err;
    System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
  }

  @AfterEach
  void restoreTheLog() {
    System.setErr(originalErr);
  }

  private String logged() {
    return log.toString(StandardCharsets.UTF_8);
  }

  @Test
  void aFencedOutcomeIsLoggedAsLostToAnotherOwner() {
    UnrecordedLog.INSTANCE.accept(new UnrecordedOutcome(key, TAG, UnrecordedOutcome.Reason.FENCED, 1, null));

    assertThat(logged()).contains("WARN").contains("Idempotency key '" + TAG + "': the claim was lost before the "
        + "outcome was stored").doesNotContain("could not be stored");
  }

  @Test
  void anOutcomeTheStoreDidNotTakeIsLoggedWithItsAttemptsAndTheClassOfTheLastError() {
    UnrecordedLog.INSTANCE.accept(new UnrecordedOutcome(key, TAG, UnrecordedOutcome.Reason.STORE_UNAVAILABLE, 3,
        new TimeoutException("redis-7.internal:6379 secret")));
    UnrecordedLog.INSTANCE.accept(new UnrecordedOutcome(key, TAG, UnrecordedOutcome.Reason.STORE_UNAVAILABLE, 0,
        null));

    assertThat(logged()).contains("WARN")
        .contains("Idempotency key '" + TAG + "': the outcome could not be stored in 3 attempts before the lease "
            + "ended (java.util.concurrent.TimeoutException)")
        .contains("could not be stored in 0 attempts before the lease ended (no error)")
        .doesNotContain("secret").doesNotContain("claim was lost");
  }

  @Test
  void toStringNamesTheTagTheReasonTheAttemptsAndTheClassOfTheLastErrorOnly() {
    assertThat(new UnrecordedOutcome(key, TAG, UnrecordedOutcome.Reason.STORE_UNAVAILABLE, 3,
        new TimeoutException("secret")))
        .hasToString("UnrecordedOutcome[key=" + TAG + ", reason=STORE_UNAVAILABLE, attempts=3, "
            + "lastError=java.util.concurrent.TimeoutException]");
    assertThat(new UnrecordedOutcome(key, TAG, UnrecordedOutcome.Reason.FENCED, 1, null))
        .hasToString("UnrecordedOutcome[key=" + TAG + ", reason=FENCED, attempts=1, lastError=none]");
  }
}
