package io.breakwater.redis;

import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.redis.testing.RedisProcess;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * An operationTimeout or lease of ChronoUnit.FOREVER.getDuration() (beyond 292 years: "no limit") makes the stores
 * answer as they would without one; Reactor's timeout(Duration) and Duration.toMillis() throw for it.
 */
class RedisHostileDurationsIT {

  static final Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE);
  static final Duration VERIFY = Duration.ofSeconds(10);

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

  @Test
  void aBreakerStoreWithAnOperationTimeoutOfForeverClaimsAndReleasesProbes() {
    RedisBreakerStateStore store = RedisBreakerStateStore.create(clients.standalone(redis.address()), "bw:hostile:",
        FOREVER);
    StepVerifier.create(store.claimProbe("search", 1, Duration.ofSeconds(30)))
        .expectSubscription()
        .expectNext(true)
        .expectComplete()
        .verify(VERIFY);
    StepVerifier.create(store.releaseProbe("search"))
        .expectSubscription()
        .expectComplete()
        .verify(VERIFY);
  }

  @Test
  void aProbeLeaseOfForeverIsClaimedInsteadOfThrowing() {
    RedisBreakerStateStore store = RedisBreakerStateStore.create(clients.standalone(redis.address()));
    StepVerifier.create(store.claimProbe("search", 1, FOREVER))
        .expectSubscription()
        .expectNext(true)
        .expectComplete()
        .verify(VERIFY);
  }

  @Test
  void aRetryBudgetWithAnOperationTimeoutOfForeverGrantsRetries() {
    try (RedisRetryBudget budget = RedisRetryBudget.builder(clients.standalone(redis.address()), "flights")
        .ratio(0.5).minRetriesPerSecond(10).capacity(10).operationTimeout(FOREVER).build()) {
      StepVerifier.create(budget.tryAcquire(0))
          .expectSubscription()
          .expectNext(true)
          .expectComplete()
          .verify(VERIFY);
    }
  }

  @Test
  void anIdempotencyStoreWithAnOperationTimeoutOfForeverClaimsKeys() {
    try (RedisIdempotencyStore store = RedisIdempotencyStore.builder(clients.standalone(redis.address()))
        .operationTimeout(FOREVER).build()) {
      StepVerifier.create(store.claim("k", "f", "owner", Duration.ofSeconds(30)))
          .expectSubscription()
          .expectNextMatches(claim -> claim instanceof IdempotencyStore.Acquired)
          .expectComplete()
          .verify(VERIFY);
    }
  }
}
