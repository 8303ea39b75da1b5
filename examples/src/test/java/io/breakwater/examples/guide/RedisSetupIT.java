package io.breakwater.examples.guide;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.examples.guide.Domain.Receipt;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.redis.testing.RedisProcess;
import io.breakwater.retry.RetryPolicy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonReactiveClient;
import org.redisson.config.Config;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The snippets of docs/redis.md, against a redis-server this test starts. */
class RedisSetupIT {

  private static RedisProcess redis;
  private static RedissonReactiveClient redisson;
  private static RedissonReactiveClient otherInstance;

  @BeforeAll
  static void start() {
    redis = RedisProcess.start();
    redisson = RedisSetup.connect(redis.address());
    otherInstance = RedisSetup.connect(redis.address());
  }

  @AfterAll
  static void stop() {
    redisson.shutdown();
    otherInstance.shutdown();
    redis.close();
  }

  @Test
  void twoInstancesRefundAnOrderOnce() {
    AtomicInteger refunds = new AtomicInteger();
    Mono<Receipt> refund = Mono.fromSupplier(() -> new Receipt("o-7", "refund #" + refunds.incrementAndGet()));
    IdempotencyKey key = IdempotencyKey.explicit("payments.refund", "o-7", "o-7");

    byte[] secret = "the shared 32-byte secret for IT".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    var here = new RedisSetup.SharedRefunds(redisson, secret);
    var there = new RedisSetup.SharedRefunds(otherInstance, secret);
    var receipts = Flux.merge(here.refundOnce(refund, key), there.refundOnce(refund, key),
            here.refundOnce(refund, key), there.refundOnce(refund, key))
        .collectList().block(Duration.ofSeconds(20));

    assertThat(refunds).hasValue(1);
    assertThat(receipts).hasSize(4).containsOnly(new Receipt("o-7", "refund #1"));
  }

  @Test
  void aBreakerAndARetryPolicyOnSharedState() {
    CircuitBreaker search = RedisSetup.searchBreaker(redisson);
    RetryPolicy flights = RedisSetup.flightsPolicy(redisson);

    String answer = Mono.just("ok").transformDeferred(io.breakwater.Breakwater.guardedBy(search))
        .transformDeferred(io.breakwater.Breakwater.retryWithBudget(flights)).block(Duration.ofSeconds(10));

    assertThat(answer).isEqualTo("ok");
    assertThat(search.state()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(flights.name()).isEqualTo("flights");
  }

  @Test
  void theTopologiesAreRedissonConfiguration() throws Exception {
    Config cluster = RedisSetup.cluster();
    Config sentinel = RedisSetup.sentinel();

    assertThat(cluster.isClusterConfig()).isTrue();
    assertThat(sentinel.isSentinelConfig()).isTrue();
    assertThat(RedisSetup.tls("secret").useSingleServer().getAddress()).startsWith("rediss://");
    assertThat(RedisSetup.acl("secret").useSingleServer().getUsername()).isEqualTo("breakwater");
  }
}
