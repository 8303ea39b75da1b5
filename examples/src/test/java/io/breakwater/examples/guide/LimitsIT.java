package io.breakwater.examples.guide;

import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.throttledBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import io.breakwater.redis.testing.RedisProcess;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonReactiveClient;
import reactor.core.publisher.Mono;

/** The Redis snippet of docs/limits.md, against a redis-server this test starts. */
class LimitsIT {

  private static RedisProcess redis;
  private static RedissonReactiveClient redisson;

  @BeforeAll
  static void start() {
    redis = RedisProcess.start();
    redisson = RedisSetup.connect(redis.address());
  }

  @AfterAll
  static void stop() {
    redisson.shutdown();
    redis.close();
  }

  @Test
  void aCallRunsUnderTheSharedRateAndConcurrencyLimits() {
    List<Object> limits = Limits.shared(redisson);
    RateLimit openai = (RateLimit) limits.get(0);
    ConcurrencyLimit search = (ConcurrencyLimit) limits.get(1);

    String answer = Mono.just("ok").transformDeferred(limitedBy(search)).transformDeferred(throttledBy(openai))
        .block(Duration.ofSeconds(20));

    assertThat(answer).isEqualTo("ok");
    assertThat(search.name()).isEqualTo("search");
    assertThat(openai.name()).isEqualTo("openai");
  }
}
