package io.breakwater.redis;

import static io.breakwater.Breakwater.idempotentBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.StoreUnavailableException;
import io.breakwater.redis.testing.RedisCluster;
import io.breakwater.redis.testing.RedisProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonReactiveClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * Four instances (four Redisson clients, four stores) race 32 duplicates each of every key: each key's side effect
 * runs exactly once, and every caller gets that one run's result. On a standalone server and on a 3-master cluster.
 * Callers retry a typed refusal ({@link StoreUnavailableException}), as real callers do: on a busy 2-core machine a
 * claim may fail closed, and that must neither fail the test nor run anything twice.
 */
class ExactlyOnceAcrossInstancesIT {

  private static final int INSTANCES = 4;
  private static final int DUPLICATES = 32;
  /** 1 000 in the suite; {@code -Dbreakwater.exactlyonce.keys=5000} for the longer run the docs quote. */
  private static final int KEYS = Integer.getInteger("breakwater.exactlyonce.keys", 1_000);

  @Test
  void exactlyOnceOnAStandaloneServer() {
    try (RedisProcess redis = RedisProcess.start(); RedisClients clients = RedisClients.forLoad()) {
      raceAndCheck(i -> clients.standalone(redis.address()));
    }
  }

  @Test
  void exactlyOnceOnAThreeMasterCluster() {
    try (RedisCluster cluster = RedisCluster.start(); RedisClients clients = RedisClients.forLoad()) {
      raceAndCheck(i -> clients.cluster(cluster.addresses()));
    }
  }

  private void raceAndCheck(Function<Integer, RedissonReactiveClient> client) {
    List<RedisIdempotencyStore> stores = new ArrayList<>();
    List<IdempotencyPolicy> policies = new ArrayList<>();
    for (int i = 0; i < INSTANCES; i++) {
      RedisIdempotencyStore store = RedisIdempotencyStore.builder(client.apply(i))
          .operationTimeout(Duration.ofSeconds(10)).build();
      stores.add(store);
      policies.add(IdempotencyPolicy.builder(store).keySecret(RedisClients.KEY_SECRET)
          .pollInterval(Duration.ofMillis(500)).build());
    }
    AtomicIntegerArray runsPerKey = new AtomicIntegerArray(KEYS);
    AtomicInteger executions = new AtomicInteger();
    try {
      List<String> wrong = Flux.range(0, KEYS)
          .flatMap(k -> {
            IdempotencyKey key = IdempotencyKey.of("orders.place", Map.of("order", k));
            Mono<String> sideEffect = Mono.fromCallable(() -> {
              executions.incrementAndGet();
              return k + ":" + runsPerKey.incrementAndGet(k);
            }).subscribeOn(Schedulers.parallel());
            return Flux.range(0, INSTANCES * DUPLICATES)
                .flatMap(caller -> sideEffect
                    .transformDeferred(idempotentBy(key, policies.get(caller % INSTANCES), String.class))
                    // a claim that fails closed (a busy machine: "Command still hasn't been written into
                    // connection!") is a typed refusal, and a caller retries it
                    .retryWhen(Retry.backoff(20, Duration.ofMillis(50)).maxBackoff(Duration.ofSeconds(1))
                        .filter(StoreUnavailableException.class::isInstance)))
                .filter(result -> !result.equals(k + ":1"))
                .map(result -> "a caller of key " + k + " got " + result);
          }, 4)
          .collectList()
          .block(Duration.ofMinutes(5));

      assertThat(wrong).as("callers that got a second run's result").isEmpty();
      assertThat(executions).as("every key resolved, none twice").hasValue(KEYS);
      for (int k = 0; k < KEYS; k++) {
        assertThat(runsPerKey.get(k)).as("runs of key %d", k).isOne();
      }
    } finally {
      stores.forEach(RedisIdempotencyStore::close);
    }
  }
}
