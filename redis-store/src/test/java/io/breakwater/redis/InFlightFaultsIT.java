package io.breakwater.redis;

import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.StoreUnavailableException;
import io.breakwater.idempotency.UnrecordedOutcome;
import io.breakwater.redis.testing.RedisProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * Issue 18, in one process: Redis with AOF {@code appendfsync always} is killed ({@code kill -9}) or paused
 * ({@code SIGSTOP}) while calls are in flight, when about 30 % of the keys have run. Four instances (four Redisson
 * clients) call every key; callers retry typed refusals, as real callers do. A ledger in the test's memory, which
 * survives Redis, counts executions: every key runs exactly once, and every caller gets that run's result.
 * {@code FaultsAcrossProcessesIT} runs the same with worker processes and more faults.
 */
class InFlightFaultsIT {

  private static final int INSTANCES = 4;
  private static final int KEYS = 200;

  private RedisProcess redis;
  private RedisClients clients;
  private final List<RedisIdempotencyStore> stores = new ArrayList<>();
  private final List<IdempotencyPolicy> policies = new ArrayList<>();
  private final AtomicIntegerArray ledger = new AtomicIntegerArray(KEYS);
  private final AtomicInteger ran = new AtomicInteger();
  private final List<UnrecordedOutcome> unrecorded = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() {
    redis = RedisProcess.start("--appendonly", "yes", "--appendfsync", "always");
    clients = RedisClients.forLoad();
    for (int i = 0; i < INSTANCES; i++) {
      RedisIdempotencyStore store = RedisIdempotencyStore.builder(clients.standalone(redis.address()))
          .operationTimeout(Duration.ofSeconds(1)).build();
      stores.add(store);
      // The lease outlives the outage; renewal keeps it short enough for crash recovery.
      policies.add(IdempotencyPolicy.builder(store).keySecret(RedisClients.KEY_SECRET)
          .lease(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(250)).onUnrecorded(unrecorded::add).build());
    }
  }

  @AfterEach
  void stop() {
    stores.forEach(RedisIdempotencyStore::close);
    clients.close();
    redis.close();
  }

  /** Every instance calls every key; each call retries its typed refusals for up to 40 s. */
  private List<String> callEveryKeyFromEveryInstance() {
    return Flux.range(0, KEYS)
        .flatMap(k -> {
          IdempotencyKey key = IdempotencyKey.of("payments.charge", Map.of("order", k));
          Mono<String> charge = Mono.delay(Duration.ofMillis(5))
              .map(x -> {
                ran.incrementAndGet();
                return k + ":" + ledger.incrementAndGet(k);
              });
          return Flux.range(0, INSTANCES)
              .flatMap(i -> charge.transformDeferred(idempotentBy(key, policies.get(i), String.class))
                  .transformDeferred(withDeadline(Duration.ofSeconds(5)))
                  .retryWhen(Retry.backoff(200, Duration.ofMillis(100)).maxBackoff(Duration.ofMillis(500))
                      .filter(e -> e instanceof StoreUnavailableException
                          || e instanceof io.breakwater.deadline.DeadlineExceededException)))
              .filter(result -> !result.equals(k + ":1"))
              .map(result -> "a caller of key " + k + " got " + result)
              .onErrorResume(e -> Mono.just("a caller of key " + k + " failed: " + e.getClass().getSimpleName()));
        }, 16)
        .subscribeOn(Schedulers.boundedElastic())
        .collectList()
        .block(Duration.ofMinutes(3));
  }

  private void whenAThirdHaveRun(Runnable fault) {
    Schedulers.boundedElastic().schedule(() -> {
      while (ran.get() < KEYS * 3 / 10) {
        Thread.onSpinWait();
        try {
          Thread.sleep(1);
        } catch (InterruptedException e) {
          return;
        }
      }
      fault.run();
    });
  }

  private void assertEveryKeyRanOnce(List<String> wrong) {
    assertThat(wrong).as("callers that got another run's result or gave up").isEmpty();
    for (int k = 0; k < KEYS; k++) {
      assertThat(ledger.get(k)).as("executions of key %d", k).isOne();
    }
    assertThat(unrecorded).as("outcomes that could not be stored").isEmpty();
  }

  @Test
  void redisKilledWithCallsInFlightAndRestartedAfterTwoSecondsRunsNoKeyTwice() {
    whenAThirdHaveRun(() -> {
      redis.kill();
      sleep(2_000);
      redis.restart();
    });
    assertEveryKeyRanOnce(callEveryKeyFromEveryInstance());
  }

  @Test
  void redisPausedWithCallsInFlightForThreeSecondsRunsNoKeyTwice() {
    whenAThirdHaveRun(() -> {
      redis.pause();
      sleep(3_000);
      redis.resume();
    });
    assertEveryKeyRanOnce(callEveryKeyFromEveryInstance());
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
