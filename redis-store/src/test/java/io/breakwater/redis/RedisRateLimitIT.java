package io.breakwater.redis;

import static io.breakwater.Breakwater.throttledBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.HttpStatusException;
import io.breakwater.limit.CallWeight;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.LimitExceededException.Reason;
import io.breakwater.limit.ProviderRateLimits;
import io.breakwater.limit.ProviderRateLimits.Quota;
import io.breakwater.limit.ProviderRateLimits.Reading;
import io.breakwater.limit.RateLimit;
import io.breakwater.redis.testing.RedisProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonReactiveClient;
import reactor.core.publisher.Mono;

/** The rate limit's Lua script on a real redis-server: the same arithmetic as the in-memory limit. */
class RedisRateLimitIT {

  private RedisProcess redis;
  private RedisClients clients;
  private RedissonReactiveClient a;
  private RedissonReactiveClient b;

  @BeforeEach
  void start() {
    redis = RedisProcess.start();
    clients = new RedisClients();
    a = clients.standalone(redis.address());
    b = clients.standalone(redis.address());
  }

  @AfterEach
  void stop() {
    clients.close();
    redis.close();
  }

  private static RateLimit tokens(RedissonReactiveClient redisson, long perMinute) {
    return RedisRateLimit.builder(redisson, RateLimit.builder("openai").tokens(perMinute, Duration.ofMinutes(1))
        .build()).operationTimeout(Duration.ofSeconds(5)).build();
  }

  /** The tokens the bucket holds, read from the hash. */
  private double level() {
    return field("lt");
  }

  /** A number of the limit's hash. */
  private double field(String name) {
    String reply = redis.command("HGET", "bw:rate:{openai}", name);
    return Double.parseDouble(reply.substring(reply.indexOf('\n') + 1).trim());
  }

  record Reply(long tokens, Map<String, List<String>> headers) {}

  @Test
  void instancesTakeFromOneBucketAndAWaitingCallRunsWhenItsTokensRefill() {
    RateLimit template = RateLimit.builder("openai").tokens(600, Duration.ofSeconds(3)).build();
    RateLimit onA = RedisRateLimit.builder(a, template).operationTimeout(Duration.ofSeconds(5)).build();
    RateLimit onB = RedisRateLimit.builder(b, template).operationTimeout(Duration.ofSeconds(5)).build();
    Mono.just(1).transformDeferred(throttledBy(onA, CallWeight.tokens(600))).block(Duration.ofSeconds(5));
    long start = System.nanoTime();
    Mono.just(1).transformDeferred(throttledBy(onB, CallWeight.tokens(300))).block(Duration.ofSeconds(10));
    long waited = (System.nanoTime() - start) / 1_000_000;
    System.out.printf("a call on the second instance waited %d ms for 300 tokens at 200 a second%n", waited);
    assertThat(waited).as("300 tokens refill in 1.5 s").isBetween(1_300L, 4_000L);
  }

  @Test
  void usageHeadersRefusalsAnd429sAreSettledInRedisAsInMemory() {
    RateLimit limit = tokens(a, 10_000);
    Mono.just(new Reply(1_000, Map.of()))
        .transformDeferred(throttledBy(limit, CallWeight.tokens(3_000, Reply::tokens)))
        .block(Duration.ofSeconds(5));
    awaitLevel(9_000, 50);   // 3000 taken, 2000 unused given back

    Mono.just(new Reply(0, Map.of("x-ratelimit-limit-tokens", List.of("10000"),
            "x-ratelimit-remaining-tokens", List.of("4000"), "x-ratelimit-reset-tokens", List.of("36s"))))
        .transformDeferred(throttledBy(limit, CallWeight.<Reply>tokens(0).headers(Reply::headers)))
        .block(Duration.ofSeconds(5));
    awaitLevel(4_000, 50);   // the provider's view, paced back to full in 36 s

    Mono.error(new io.breakwater.limit.LimitExceededException("inner", Reason.QUEUE_FULL, null, "inner"))
        .transformDeferred(throttledBy(limit, CallWeight.tokens(500)))
        .onErrorResume(e -> Mono.empty()).block(Duration.ofSeconds(5));
    awaitLevel(4_000, 100);  // refused further in: the 500 came back

    Mono.error(new HttpStatusException(429, Map.of("retry-after", List.of("2"))))
        .transformDeferred(throttledBy(limit, CallWeight.tokens(100)))
        .onErrorResume(e -> Mono.empty()).block(Duration.ofSeconds(5));
    long start = System.nanoTime();
    Mono.just(1).transformDeferred(throttledBy(limit, CallWeight.tokens(1))).block(Duration.ofSeconds(10));
    assertThat((System.nanoTime() - start) / 1_000_000).as("no call for 2 s after a 429").isGreaterThan(1_500L);
  }

  @Test
  void aRetryAfterTooLongForNanosecondsFromACustomReaderBlocksTheSharedBucketInsteadOfFailingTheSettlement() {
    // ProviderRateLimits is public: a reader of its own may give any non-negative Duration, beyond what a long holds
    // in nanoseconds; the built-in readers cap theirs, the store must not rely on it
    Duration forever = Duration.ofSeconds(Long.MAX_VALUE);
    ProviderRateLimits saysForever = (headers, now) -> new Reading(new Quota(100, 0, forever), null, forever);
    RateLimit limit = RedisRateLimit.builder(a, RateLimit.builder("openai").requests(100, Duration.ofMinutes(1))
        .providerHeaders(saysForever).maxWait(Duration.ofMillis(300)).build())
        .operationTimeout(Duration.ofSeconds(5)).build();
    HttpStatusException tooMany = new HttpStatusException(429, Map.of("retry-after", List.of("1")));

    Object first = Mono.error(tooMany).transformDeferred(throttledBy(limit)).map(Object.class::cast)
        .onErrorResume(Mono::just).block(Duration.ofSeconds(5));
    assertThat(first).as("the call's own error, not the settlement's").isSameAs(tooMany);
    assertThat(redis.command("HGET", "bw:rate:{openai}", "blk")).as("the block was stored").isNotBlank();
    // the first call to ask learns the wait from the store and waits its maxWait out; the one after it is refused
    // at once from that answer
    for (Reason expected : List.of(Reason.WAITED_TOO_LONG, Reason.WOULD_WAIT_TOO_LONG)) {
      Object next = Mono.just(1).transformDeferred(throttledBy(limit)).map(Object.class::cast)
          .onErrorResume(Mono::just).block(Duration.ofSeconds(5));
      assertThat(next).isInstanceOfSatisfying(LimitExceededException.class,
          e -> assertThat(e.reason()).isEqualTo(expected));
    }
  }

  @Test
  void aCallHeavierThanTheBucketIsRefusedAsNeverRunnable() {
    Object refusal = Mono.just(1).transformDeferred(throttledBy(tokens(a, 1_000), CallWeight.tokens(1_001)))
        .map(Object.class::cast).onErrorResume(Mono::just).block(Duration.ofSeconds(5));
    assertThat(refusal).isInstanceOfSatisfying(LimitExceededException.class,
        e -> assertThat(e.reason()).isEqualTo(Reason.TOO_HEAVY));
  }

  @Test
  void aProvidersLimitOfOneTokenLowersTheSharedCapForOneIntervalAndLocksNoInstanceOut() {
    RateLimit template = RateLimit.builder("openai").tokens(600, Duration.ofSeconds(2)).build();
    RateLimit onA = RedisRateLimit.builder(a, template).operationTimeout(Duration.ofSeconds(5)).build();
    RateLimit onB = RedisRateLimit.builder(b, template).operationTimeout(Duration.ofSeconds(5)).build();
    // one answer on one instance, from a hostile or misconfigured proxy
    Mono.just(new Reply(0, Map.of("x-ratelimit-limit-tokens", List.of("1"))))
        .transformDeferred(throttledBy(onA, CallWeight.<Reply>tokens(0).headers(Reply::headers)))
        .block(Duration.ofSeconds(5));
    assertThat(field("ct")).as("the cap the answer set").isEqualTo(1);

    long start = System.nanoTime();
    Object other = Mono.just(1).transformDeferred(throttledBy(onB, CallWeight.tokens(300))).map(Object.class::cast)
        .onErrorResume(Mono::just).block(Duration.ofSeconds(10));
    long waited = (System.nanoTime() - start) / 1_000_000;
    assertThat(other).as("delayed, not refused as too heavy").isEqualTo(1);
    assertThat(waited).as("the configured cap is back after its interval (2 s)").isBetween(1_000L, 8_000L);
    assertThat(field("ct")).isEqualTo(600);
  }

  @Test
  void aPausedRedisLetsCallsThroughALocalLimitOrRefusesThem() {
    RateLimit open = RedisRateLimit.builder(a, RateLimit.builder("open").requests(2, Duration.ofMinutes(1)).build())
        .operationTimeout(Duration.ofMillis(300)).build();
    RateLimit closed = RedisRateLimit.builder(b, RateLimit.builder("closed").requests(2, Duration.ofMinutes(1))
        .build()).operationTimeout(Duration.ofMillis(300)).failClosed().build();
    redis.pause();
    try {
      assertThat(Mono.just("ok").transformDeferred(throttledBy(open)).block(Duration.ofSeconds(5)))
          .isEqualTo("ok");
      Object refused = Mono.just("x").transformDeferred(throttledBy(closed)).map(Object.class::cast)
          .onErrorResume(Mono::just).block(Duration.ofSeconds(5));
      assertThat(refused).isInstanceOfSatisfying(LimitExceededException.class,
          e -> assertThat(e.reason()).isEqualTo(Reason.STORE_UNAVAILABLE));
    } finally {
      redis.resume();
    }
  }

  private void awaitLevel(double expected, double tolerance) {
    long until = System.nanoTime() + 5_000_000_000L;
    double level = level();
    while (Math.abs(level - expected) > tolerance && System.nanoTime() < until) {
      Thread.onSpinWait();
      level = level();
    }
    assertThat(level).isCloseTo(expected, org.assertj.core.data.Offset.offset(tolerance));
  }
}
