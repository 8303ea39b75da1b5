package io.breakwater.internal.limit;

import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.throttledBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.limit.CallWeight;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.RateLimit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Races on the lock-free paths of the in-memory limits: permits taken by compare-and-set by many threads at once,
 * while other threads cancel, answer, correct and change the limits under their monitor.
 */
class LockFreeLimitsRaceTest {

  private static final int THREADS = 4;

  /** Runs {@code body(thread)} on {@link #THREADS} threads started together; rethrows the first failure. */
  private static void race(ThrowingIntConsumer body) throws InterruptedException {
    CountDownLatch start = new CountDownLatch(1);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      int id = t;
      Thread thread = new Thread(() -> {
        try {
          start.await();
          body.accept(id);
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }, "race-" + t);
      thread.start();
      threads.add(thread);
    }
    start.countDown();
    for (Thread thread : threads) {
      thread.join(60_000);
    }
    assertThat(failure.get()).as("no thread failed").isNull();
  }

  @FunctionalInterface
  private interface ThrowingIntConsumer {
    void accept(int thread) throws Exception;
  }

  @Test
  void manyThreadsAcquiringCancellingAndAnsweringAgainstFixedTenNeverHoldMoreThanTenAndReturnEveryPermit()
      throws InterruptedException {
    ConcurrencyLimit limit = ConcurrencyLimit.builder("racy").fixed(10).maxWait(Duration.ofMinutes(1)).build();
    AtomicInteger running = new AtomicInteger();
    AtomicInteger mostRunning = new AtomicInteger();
    AtomicInteger ended = new AtomicInteger();
    ConcurrentLinkedQueue<Object[]> open = new ConcurrentLinkedQueue<>();
    int perThread = 5_000;

    race(thread -> {
      SplittableRandom random = new SplittableRandom(thread);
      for (int i = 0; i < perThread; i++) {
        Sinks.One<String> answer = Sinks.one();
        Mono<String> call = Mono.defer(() -> {
          mostRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
          // counted out before the answer travels on, as a server would
          return answer.asMono().doOnTerminate(running::decrementAndGet).doOnCancel(running::decrementAndGet);
        });
        Disposable caller = call.transformDeferred(limitedBy(limit))
            .subscribe(v -> ended.incrementAndGet(), e -> ended.incrementAndGet());
        open.add(new Object[] {answer, caller});
        // end someone's call: ours or another thread's; answer it, cancel it, or both at once
        Object[] other = open.poll();
        if (other != null) {
          int how = random.nextInt(3);
          if (how != 1) {
            ((Sinks.One<?>) other[0]).tryEmitEmpty();
          }
          if (how != 0) {
            ((Disposable) other[1]).dispose();
          }
        }
      }
    });
    for (Object[] left = open.poll(); left != null; left = open.poll()) {
      ((Disposable) left[1]).dispose();
    }

    assertThat(mostRunning.get()).as("never more than the limit in flight").isLessThanOrEqualTo(10);
    assertThat(limit.inFlight()).as("every permit returned").isZero();
    assertThat(limit.queued()).as("nobody left waiting").isZero();
    assertThat(running).hasValue(0);
  }

  /** A reply: the tokens it used, and the provider's headers. */
  record Reply(long tokens, Map<String, List<String>> headers) {}

  @Test
  void aBucketNeverOverGrantsUnderConcurrentAcquireCorrectionGiveBackAndProviderHeaders()
      throws InterruptedException {
    VirtualTimeScheduler frozen = VirtualTimeScheduler.create();   // no refill: every permit is accounted for
    try {
      RateLimit limit = RateLimit.builder("racy")
          .requests(250, Duration.ofMinutes(1))
          .tokens(10_000, Duration.ofMinutes(1))
          .maxWait(Duration.ZERO)
          .scheduler(() -> frozen)
          .build();
      // the provider repeats the configured limits and has plenty left: every answer changes the buckets under the
      // limit's monitor (and so stops the lock-free path for a moment) without lowering them
      Map<String, List<String>> headers = Map.of("x-ratelimit-limit-tokens", List.of("10000"),
          "x-ratelimit-remaining-tokens", List.of("1000000"), "x-ratelimit-limit-requests", List.of("250"),
          "x-ratelimit-remaining-requests", List.of("1000000"));
      CallWeight<Reply> weight = CallWeight.tokens(100, Reply::tokens).headers(Reply::headers);
      AtomicInteger admitted = new AtomicInteger();
      AtomicInteger refused = new AtomicInteger();
      AtomicInteger neverSent = new AtomicInteger();
      AtomicReference<Throwable> unexpected = new AtomicReference<>();
      int perThread = 200;

      race(thread -> {
        SplittableRandom random = new SplittableRandom(thread);
        for (int i = 0; i < perThread; i++) {
          int what = random.nextInt(4);
          Mono<Reply> call = Mono.fromSupplier(() -> {
            if (what == 3) {
              // refused before the wire by Breakwater further in: every permit comes back
              throw new LimitExceededException("inner", LimitExceededException.Reason.QUEUE_FULL, null, "full");
            }
            // every call ends using half its estimate; one in three carries the provider's headers
            return new Reply(50, what == 0 ? headers : Map.of());
          });
          call.transformDeferred(throttledBy(limit, weight)).subscribe(
              reply -> admitted.incrementAndGet(),
              e -> {
                if (e instanceof LimitExceededException l && l.source().equals("racy")) {
                  refused.incrementAndGet();
                } else if (e instanceof LimitExceededException) {
                  neverSent.incrementAndGet();
                } else {
                  unexpected.compareAndSet(null, e);
                }
              });
        }
      });

      assertThat(unexpected.get()).isNull();
      assertThat(admitted.get() + refused.get() + neverSent.get()).isEqualTo(THREADS * perThread);
      assertThat(admitted.get()).as("the limit was reached").isPositive();
      assertThat(refused.get()).as("and calls were refused").isPositive();
      // each answered call kept 1 request and 50 tokens; each call refused before the wire kept nothing
      assertThat(limit.availableRequests()).as("no request over-granted nor lost").isEqualTo(250 - admitted.get());
      assertThat(limit.availableTokens()).as("no token over-granted nor lost")
          .isEqualTo(10_000 - 50L * admitted.get());
      assertThat(limit.queued()).isZero();
    } finally {
      frozen.dispose();
    }
  }
}
