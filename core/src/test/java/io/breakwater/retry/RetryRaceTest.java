package io.breakwater.retry;

import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.retry.RetryWithBudgetTest.status;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.retry.RetryWithBudgetTest.Calls;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

/** Races on the Mono subscriber: demand against a new attempt, cancellation against a retry. */
class RetryRaceTest {

  private static RetryPolicy zeroDelay(int maxRetries) {
    return RetryPolicy.builder().name("race").backoff(Backoff.fixed(Duration.ZERO)).timeoutBase(Duration.ZERO)
        .maxRetries(maxRetries).budget(RetryBudget.unlimited()).build();
  }

  @Test
  void requestRacingANewAttemptDeliversTheValueExactlyOnce() throws InterruptedException {
    RetryPolicy policy = zeroDelay(1);
    for (int round = 0; round < 2_000; round++) {
      Calls calls = new Calls(status(503));
      AtomicInteger values = new AtomicInteger();
      AtomicReference<SignalType> end = new AtomicReference<>();
      CountDownLatch done = new CountDownLatch(1);
      BaseSubscriber<String> subscriber = new BaseSubscriber<>() {
        @Override
        protected void hookOnSubscribe(org.reactivestreams.Subscription subscription) {
          // no demand yet: the retry runs on a parallel thread while the test thread requests
        }

        @Override
        protected void hookOnNext(String value) {
          values.incrementAndGet();
        }

        @Override
        protected void hookFinally(SignalType type) {
          end.set(type);
          done.countDown();
        }
      };
      calls.mono().transformDeferred(retryWithBudget(policy)).subscribe(subscriber);
      subscriber.request(1);
      assertThat(done.await(5, TimeUnit.SECONDS)).as("round %d finished", round).isTrue();
      assertThat(values).as("round %d", round).hasValue(1);
      assertThat(end.get()).as("round %d", round).isEqualTo(SignalType.ON_COMPLETE);
    }
  }

  @Test
  void cancellationRacingRetriesStopsThemAndSignalsNothing() throws InterruptedException {
    RetryPolicy policy = zeroDelay(Integer.MAX_VALUE);
    for (int round = 0; round < 200; round++) {
      Calls calls = Calls.failing(status(503));
      AtomicReference<SignalType> end = new AtomicReference<>();
      BaseSubscriber<String> subscriber = new BaseSubscriber<>() {
        @Override
        protected void hookFinally(SignalType type) {
          end.set(type);
        }
      };
      calls.mono().transformDeferred(retryWithBudget(policy)).subscribe(subscriber);
      while (calls.count.get() < 1 + round % 5) {
        Thread.onSpinWait();   // the test's own thread may spin
      }
      subscriber.cancel();
      int afterCancel = calls.count.get();
      Mono.delay(Duration.ofMillis(2)).block();
      assertThat(calls.count.get()).as("round %d: at most the attempt in flight starts", round)
          .isLessThanOrEqualTo(afterCancel + 1);
      assertThat(end.get()).as("round %d", round).isEqualTo(SignalType.CANCEL);
    }
  }
}
