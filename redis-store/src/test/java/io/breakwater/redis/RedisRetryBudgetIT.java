package io.breakwater.redis;

import static io.breakwater.Breakwater.retryWithBudget;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.failure.HttpStatusException;
import io.breakwater.redis.testing.RedisProcess;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.retry.RetryStopReason;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class RedisRetryBudgetIT {

  private RedisProcess redis;
  private RedisClients clients;

  @BeforeEach
  void start() {
    redis = RedisProcess.start();
    clients = new RedisClients();
  }

  @AfterEach
  void stop() {
    clients.close();
    redis.close();
  }

  private RedisRetryBudget budget(double ratio, double floor, double capacity) {
    return RedisRetryBudget.builder(clients.standalone(redis.address()), "flights")
        .ratio(ratio).minRetriesPerSecond(floor).capacity(capacity).build();
  }

  private static long granted(RedisRetryBudget budget, int asks) {
    long granted = 0;
    for (int i = 0; i < asks; i++) {
      if (Boolean.TRUE.equals(budget.tryAcquire(0).block())) {
        granted++;
      }
    }
    return granted;
  }

  @Test
  void instancesShareOneBucketAndEveryCallRefillsIt() {
    try (RedisRetryBudget a = budget(0.1, 0, 5); RedisRetryBudget b = budget(0.1, 0, 5)) {
      assertThat(granted(a, 8)).as("the bucket starts full with 5 tokens").isEqualTo(5);
      assertThat(granted(b, 3)).as("instance b sees the same empty bucket").isZero();

      for (int i = 0; i < 30; i++) {
        b.onRequest();   // no round trip: counted locally, flushed with the next request for a retry
      }
      assertThat(granted(b, 5)).as("30 calls at 10 % deposit 3 tokens").isEqualTo(3);
      assertThat(granted(a, 1)).isZero();
    }
  }

  @Test
  void depositsReachRedisEveryFlushIntervalWithoutARetryToCarryThem() {
    RedisRetryBudget depositing = RedisRetryBudget.builder(clients.standalone(redis.address()), "flights")
        .ratio(0.1).capacity(5).flushInterval(Duration.ofMillis(100)).build();
    try (depositing; RedisRetryBudget other = budget(0.1, 0, 5)) {
      assertThat(granted(other, 5)).as("the bucket starts full with 5 tokens").isEqualTo(5);
      for (int i = 0; i < 30; i++) {
        depositing.onRequest();   // counted locally: no retry of this instance will carry them
      }
      long granted = 0;
      for (int i = 0; i < 100 && granted < 3; i++) {
        LockSupport.parkNanos(50_000_000L);
        granted += granted(other, 1);
      }
      assertThat(granted).as("the 3 tokens the flush deposited, seen by the other instance").isEqualTo(3);
    }
  }

  @Test
  void aFlushIntervalBelowOneMillisecondIsRefusedAtBuildAndAHugeOneIsAccepted() {
    RedisRetryBudget.Builder builder = RedisRetryBudget.builder(clients.standalone(redis.address()), "flights");
    assertThatThrownBy(() -> builder.flushInterval(Duration.ofNanos(500_000)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("flushInterval is PT0.0005S: give 1 ms or more");
    try (RedisRetryBudget rare = builder.flushInterval(Duration.ofSeconds(Long.MAX_VALUE)).build()) {
      rare.onRequest();
      assertThat(rare.tryAcquire(0).block(Duration.ofSeconds(5))).as("retries still carry the deposits").isTrue();
    }
  }

  @Test
  void floorRefillsByRedisTime() throws InterruptedException {
    try (RedisRetryBudget budget = budget(0, 20, 2)) {
      long started = System.nanoTime();
      long first = granted(budget, 5);
      long refilledMeanwhile = (System.nanoTime() - started) * 20 / 1_000_000_000L + 1;   // on a busy machine
      assertThat(first).isBetween(2L, 2L + refilledMeanwhile);
      Thread.sleep(250);   // 20 per second for a quarter of a second: 5 tokens, capped at 2
      assertThat(granted(budget, 2)).isEqualTo(2);
    }
  }

  @Test
  void unreachableBudgetRefusesTheRetry() {
    try (RedisRetryBudget budget = budget(0.1, 10, 10)) {
      redis.pause();
      try {
        assertThat(budget.tryAcquire(0).block(Duration.ofSeconds(5))).isFalse();
      } finally {
        redis.resume();
      }
    }
  }

  /**
   * Review suspicion, confirmed: after a reply timed out, the deposits it carried were returned to the local counter
   * although the script had been applied, so they were counted twice. An answer that timed out is ambiguous, so its
   * deposits are now dropped (fewer retries, never more); only a command that was never written gives them back.
   */
  @Test
  void depositsOfAVisitWhoseReplyTimedOutAreNeverCountedTwice() throws InterruptedException {
    try (RedisRetryBudget budget = RedisRetryBudget.builder(clients.standalone(redis.address()), "flights")
        .ratio(1.0).minRetriesPerSecond(0).capacity(20).operationTimeout(Duration.ofSeconds(2)).build()) {
      assertThat(granted(budget, 20)).as("empty the bucket").isEqualTo(20);
      for (int i = 0; i < 5; i++) {
        budget.onRequest();   // 5 calls at ratio 1: 5 tokens pending
      }
      redis.pause();
      try {
        assertThat(budget.tryAcquire(0).block(Duration.ofSeconds(5))).as("no answer in time").isFalse();
      } finally {
        redis.resume();   // the queued script now runs: +5 tokens, one taken
      }
      Thread.sleep(500);
      assertThat(granted(budget, 30)).as("the 5 deposits counted once, minus the token the late script took")
          .isEqualTo(4);
    }
  }

  @Test
  void retryWithBudgetStopsWhenTheSharedBudgetIsEmpty() {
    try (RedisRetryBudget shared = budget(0, 0, 2)) {
      RetryPolicy policy = RetryPolicy.builder().name("flights").maxRetries(5)
          .backoff(Backoff.fixed(Duration.ofMillis(1))).budget(shared).build();
      AtomicInteger attempts = new AtomicInteger();

      StepVerifier.create(Mono.error(() -> {
                attempts.incrementAndGet();
                return new HttpStatusException(503);
              })
              .transformDeferred(retryWithBudget(policy)))
          .expectErrorSatisfies(e -> assertThat(((RetryExhaustedException) e).reason())
              .isEqualTo(RetryStopReason.DEPENDENCY_BUDGET))
          .verify(Duration.ofSeconds(10));
      assertThat(attempts).as("the first attempt and the 2 retries the bucket held").hasValue(3);
    }
  }
}
