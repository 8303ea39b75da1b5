package io.breakwater.internal.limit;

import static io.breakwater.Breakwater.limitedBy;

import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.testing.SteppedScheduler;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * The in-memory concurrency limit's hand-offs ({@link Turn}'s grant, claim, cancellation and expiry;
 * {@link PermitRelay}'s settlement) explored interleaving by interleaving with Lincheck's model checker. Each
 * scenario starts on a limit of one permit with a first call running and a second one waiting for it; then, on two
 * threads, the first call ends (answered or cancelled), the second one's caller leaves or is answered, and the waits
 * run out, in every order the model checker tries. After each: no call subscribed twice, and once every caller has
 * left, no permit held, no call queued, nothing running and no timer left.
 *
 * <p>It found that a caller leaving while its turn was being granted on another thread left the call running with
 * the permit (Reactor's {@code thenMany} lost the cancellation; {@link Turn} now cancels the call itself).
 */
public class ConcurrencyHandOffInterleavingsTest {

  static {
    LimitedCall.loadLocaleData();
  }

  private final SteppedScheduler scheduler = new SteppedScheduler();
  private final ConcurrencyLimit limit = ConcurrencyLimit.builder("handoff").fixed(1)
      .maxWait(Duration.ofSeconds(1)).scheduler(() -> scheduler).build();
  private final AtomicInteger running = new AtomicInteger();
  private final LimitedCall first = new LimitedCall(running);
  private final LimitedCall second = new LimitedCall(running);

  public ConcurrencyHandOffInterleavingsTest() {
    first.start(limitedBy(limit));    // takes the permit
    second.start(limitedBy(limit));   // waits for it
  }

  @Operation
  public void answerFirst() {
    first.answer();
  }

  @Operation
  public void cancelFirst() {
    first.cancel();
  }

  @Operation
  public void answerSecond() {
    second.answer();
  }

  @Operation
  public void cancelSecond() {
    second.cancel();
  }

  /** The waits run out: the second call's timer fires if it still waits. */
  @Operation
  public void expireWaits() {
    scheduler.advance(1, TimeUnit.SECONDS);
  }

  /** Checked after each interleaving, on one thread. */
  @Validate
  public void everyPermitComesBack() {
    first.checkSubscribedAtMostOnce();
    second.checkSubscribedAtMostOnce();
    first.cancel();
    second.cancel();
    LimitedCall.check(running.get() == 0, "a call still runs after every caller left");
    LimitedCall.check(limit.inFlight() == 0, "permits still held after every caller left: " + limit.inFlight());
    LimitedCall.check(limit.queued() == 0, "calls still queued after every caller left: " + limit.queued());
    LimitedCall.check(scheduler.pendingTimers() == 0, "timers left: " + scheduler.pendingTimers());
  }

  @Test
  void noInterleavingOfAnswersCancellationsAndExpiryLosesOrDoublesAPermit() {
    LimitedCall.explore(ConcurrencyHandOffInterleavingsTest.class, 8, 200);
  }
}
