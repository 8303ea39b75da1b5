package io.breakwater.limit;

import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.throttledBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.testing.DelegatingScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.test.publisher.TestPublisher;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * A waiting call's timer (its {@code maxWait}) is cancelled as soon as the wait is over, whichever way it ends: no
 * timer outlives its call ("Cancellation is a first-class outcome: it ... cancels timers").
 */
class LimitWaitTimersTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
  /** The timers the limits set through {@link #recording}, with their delay. */
  private final List<Disposable> timers = new ArrayList<>();
  private final List<Long> delays = new ArrayList<>();

  /** The virtual clock, recording every delayed task it is given. */
  private final Scheduler recording = new DelegatingScheduler(clock) {
    @Override
    public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
      Disposable timer = super.schedule(task, delay, unit);
      timers.add(timer);
      delays.add(unit.toNanos(delay));
      return timer;
    }
  };

  @AfterEach
  void stop() {
    clock.dispose();
  }

  /** The timers set for {@code maxWait}. */
  private List<Disposable> waitTimers(Duration maxWait) {
    List<Disposable> found = new ArrayList<>();
    for (int i = 0; i < timers.size(); i++) {
      if (delays.get(i) == maxWait.toNanos()) {
        found.add(timers.get(i));
      }
    }
    return found;
  }

  @Test
  void aWaiterWhoseTurnCameHasItsTimerCancelled() {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("search").fixed(1).maxWait(Duration.ofSeconds(7))
        .scheduler(() -> recording).build();
    TestPublisher<String> holder = TestPublisher.create();
    holder.mono().transformDeferred(limitedBy(limit)).subscribe();
    TestPublisher<String> waiter = TestPublisher.create();
    waiter.mono().transformDeferred(limitedBy(limit)).subscribe();
    assertThat(waitTimers(Duration.ofSeconds(7))).singleElement().satisfies(t -> assertThat(t.isDisposed()).isFalse());
    holder.complete();
    waiter.assertWasSubscribed();
    assertThat(waitTimers(Duration.ofSeconds(7))).singleElement().satisfies(t -> assertThat(t.isDisposed()).isTrue());
  }

  /** Issue 36 (security 2): the provider's lower limit does not refuse the waiter, whose timer stays armed. */
  @Test
  void aWaiterHeavierThanTheProvidersLowerLimitKeepsItsTimer() {
    RateLimit rate = RateLimit.builder("openai").tokens(1_000, Duration.ofMinutes(1)).maxWait(Duration.ofSeconds(59))
        .scheduler(() -> recording).build();
    record Reply(Map<String, List<String>> headers) {}
    TestPublisher<Reply> first = TestPublisher.create();
    first.mono().transformDeferred(throttledBy(rate, CallWeight.<Reply>tokens(1_000).headers(Reply::headers)))
        .subscribe();
    List<Throwable> errors = new ArrayList<>();
    TestPublisher.<String>create().mono().transformDeferred(throttledBy(rate, CallWeight.tokens(800)))
        .subscribe(v -> {}, errors::add);
    first.emit(new Reply(Map.of("x-ratelimit-limit-tokens", List.of("500"))));
    assertThat(errors).as("a lower provider limit never makes a call impossible").isEmpty();
    assertThat(waitTimers(Duration.ofSeconds(59))).singleElement()
        .satisfies(t -> assertThat(t.isDisposed()).isFalse());
  }
}
