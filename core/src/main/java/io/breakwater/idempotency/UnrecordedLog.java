package io.breakwater.idempotency;

import java.util.function.Consumer;
import reactor.util.Logger;
import reactor.util.Loggers;

/** The default {@code onUnrecorded}: one warning, naming the key by its tag and the store error by its class. */
final class UnrecordedLog implements Consumer<UnrecordedOutcome> {

  static final UnrecordedLog INSTANCE = new UnrecordedLog();

  private static final Logger LOG = Loggers.getLogger(IdempotencyPolicy.class);

  private UnrecordedLog() {}

  @Override
  public void accept(UnrecordedOutcome event) {
    if (event.reason() == UnrecordedOutcome.Reason.FENCED) {
      LOG.warn("Idempotency key '{}': the claim was lost before the outcome was stored (lease ended and another "
          + "owner took over); the outcome of the other owner stands", event.tag());
    } else {
      LOG.warn("Idempotency key '{}': the outcome could not be stored in {} attempts before the lease ended ({}); a "
          + "duplicate may run the call again", event.tag(), event.attempts(),
          event.lastError() == null ? "no error" : event.lastError().getClass().getName());
    }
  }
}
