package io.breakwater.internal.limit;

import static io.breakwater.Breakwater.throttledBy;

import io.breakwater.limit.RateLimit;
import io.breakwater.testing.SteppedScheduler;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * The in-memory rate limit's hand-offs ({@link FairQueue} under the limit's monitor, {@link Turn}'s grant, claim,
 * cancellation and expiry, the one dispatch timer) explored interleaving by interleaving with Lincheck's model
 * checker. Each scenario starts on a limit of one request per second with a first call running and two more waiting
 * in the fair queue; then, on two threads, a second passes (the queue's head is granted), callers leave, calls are
 * answered and the waits run out, in every order the model checker tries. After each: no more calls reached the
 * dependency than the requests the limit had, no call subscribed twice, and once every caller has left and time has
 * passed, nothing queued, nothing running and no timer left.
 */
public class RateHandOffInterleavingsTest {

  static {
    LimitedCall.loadLocaleData();
  }

  private final SteppedScheduler scheduler = new SteppedScheduler();
  private final RateLimit limit = RateLimit.builder("handoff").requests(1, Duration.ofSeconds(1))
      .maxWait(Duration.ofSeconds(5)).scheduler(() -> scheduler).build();
  private final AtomicInteger running = new AtomicInteger();
  private final AtomicInteger seconds = new AtomicInteger();
  private final LimitedCall first = new LimitedCall(running);
  private final LimitedCall second = new LimitedCall(running);
  private final LimitedCall third = new LimitedCall(running);

  public RateHandOffInterleavingsTest() {
    first.start(throttledBy(limit));    // takes the one request
    second.start(throttledBy(limit));   // the queue's head: its turn comes in a second
    third.start(throttledBy(limit));    // behind it
  }

  /** A second passes: one more request, and the dispatch timer runs the head of the queue. */
  @Operation
  public void aSecondPasses() {
    seconds.incrementAndGet();
    scheduler.advance(1, TimeUnit.SECONDS);
  }

  @Operation
  public void cancelSecond() {
    second.cancel();
  }

  @Operation
  public void cancelThird() {
    third.cancel();
  }

  @Operation
  public void answerSecond() {
    second.answer();
  }

  /** Checked after each interleaving, on one thread. */
  @Validate
  public void noRequestIsSpentTwiceAndNothingIsLeftBehind() {
    int reached = first.subscriptions() + second.subscriptions() + third.subscriptions();
    LimitedCall.check(reached <= 1 + seconds.get(), reached + " calls reached the dependency with "
        + (1 + seconds.get()) + " requests");
    first.checkSubscribedAtMostOnce();
    second.checkSubscribedAtMostOnce();
    third.checkSubscribedAtMostOnce();
    first.cancel();
    second.cancel();
    third.cancel();
    scheduler.advance(10, TimeUnit.SECONDS);
    LimitedCall.check(running.get() == 0, "a call still runs after every caller left");
    LimitedCall.check(limit.queued() == 0, "calls still queued after every caller left: " + limit.queued());
    LimitedCall.check(scheduler.pendingTimers() == 0, "timers left: " + scheduler.pendingTimers());
  }

  @Test
  void noInterleavingOfGrantsCancellationsAndAnswersSpendsARequestTwiceOrLeavesACallBehind() {
    LimitedCall.explore(RateHandOffInterleavingsTest.class, 4, 100);
  }
}
