package io.breakwater.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.Tool;
import io.breakwater.boot.app.StarterTestApplication;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.internal.boot.BreakwaterAutoConfiguration;
import io.breakwater.internal.boot.BreakwaterRedisAutoConfiguration;
import io.breakwater.internal.boot.InvalidPropertiesException;
import io.breakwater.redis.RedisBreakerStateStore;
import io.breakwater.redis.RedisIdempotencyStore;
import io.breakwater.redis.RedisRetryBudget;
import io.breakwater.redis.testing.RedisProcess;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import reactor.core.publisher.Mono;

/**
 * With {@code breakwater-redis-store} on the class path and a {@code RedissonClient} of the application's own, talking
 * to a {@code redis-server} this test starts, the starter keeps idempotency records in Redis, and shares what is
 * configured as shared.
 */
@SpringBootTest(classes = {StarterTestApplication.class, RedisAutoConfigurationIT.Client.class},
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "breakwater.tools[weather.forecast].side-effect=read-only",
        "breakwater.tools[trips.book].side-effect=non-idempotent-write",
        "breakwater.tools[trips.book].idempotency=true",
        "breakwater.tools[trips.book].single-tenant=true",
        "breakwater.breakers.state-store=redis",
        "breakwater.retry.budgets.weather.shared=true",
        "breakwater.limits.concurrency.weather.limit=2",
        "breakwater.limits.concurrency.weather.shared=true",
        "breakwater.limits.rate.weather.requests=100",
        "breakwater.limits.rate.weather.shared=true",
        "breakwater.idempotency.redis.key-prefix=it:idem:",
        "breakwater.idempotency.key-secret=" + RedisAutoConfigurationIT.KEY_SECRET})
class RedisAutoConfigurationIT {

  /** 32 bytes in base64, as {@code openssl rand -base64 32} prints them. */
  static final String KEY_SECRET = "q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=";

  static final RedisProcess REDIS = RedisProcess.start();

  @DynamicPropertySource
  static void redis(DynamicPropertyRegistry registry) {
    registry.add("test.redis.address", REDIS::address);
  }

  @AfterAll
  static void stopRedis() {
    REDIS.close();
  }

  /** The application's own client: the starter reuses it and never closes it. */
  @TestConfiguration(proxyBeanMethods = false)
  static class Client {
    @Bean(destroyMethod = "shutdown")
    RedissonClient redisson(@Value("${test.redis.address}") String address) {
      Config config = new Config();
      config.useSingleServer().setAddress(address);
      return Redisson.create(config);
    }
  }

  @Autowired
  IdempotencyStore store;
  @Autowired
  IdempotencyPolicy idempotency;
  @Autowired
  ToolDescriptors tools;
  @Autowired
  CircuitBreakerRegistry breakers;
  @Autowired
  RetryPolicies policies;
  @Autowired
  Limits limits;

  @Test
  void idempotencyRecordsLiveInTheApplicationsRedis() {
    assertThat(store).isInstanceOf(RedisIdempotencyStore.class);
    assertThat(idempotency.store()).isSameAs(store);

    AtomicInteger bookings = new AtomicInteger();
    Tool<Map<String, String>, String> book = Tool.of(tools.descriptor("trips.book"),
        args -> Mono.fromSupplier(() -> "booking " + bookings.incrementAndGet()), String.class);
    Map<String, String> trip = Map.of("from", "LIS", "to", "OPO");
    assertThat(book.call(trip).block(Duration.ofSeconds(10))).isEqualTo("booking 1");
    assertThat(book.call(trip).block(Duration.ofSeconds(10))).as("replayed from Redis").isEqualTo("booking 1");
    assertThat(bookings).hasValue(1);
    assertThat(REDIS.command("KEYS", "it:idem:*")).contains("it:idem:");
  }

  @Test
  void aRedisStoreWithoutAKeySecretStopsStartUpNamingTheProperty() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(BreakwaterRedisAutoConfiguration.class,
            BreakwaterAutoConfiguration.class))
        .withUserConfiguration(Client.class)
        .withPropertyValues("test.redis.address=" + REDIS.address(),
            "breakwater.tools[trips.book].side-effect=non-idempotent-write",
            "breakwater.tools[trips.book].idempotency=true",
            "breakwater.tools[trips.book].single-tenant=true")
        .run(context -> {
          assertThat(context).hasFailed();
          Throwable t = context.getStartupFailure();
          while (t != null && !(t instanceof InvalidPropertiesException)) {
            t = t.getCause();
          }
          assertThat(t).as("an InvalidPropertiesException in %s", context.getStartupFailure()).isNotNull();
          assertThat(((InvalidPropertiesException) t).property()).isEqualTo("breakwater.idempotency.key-secret");
          assertThat(t.getMessage()).contains("is not set, and the store is RedisIdempotencyStore")
              .contains("openssl rand -base64 32");
        });
  }

  @Test
  void breakersAndBudgetsConfiguredAsSharedUseRedis() {
    assertThat(breakers.breaker("weather.forecast").stateStore()).isInstanceOf(RedisBreakerStateStore.class);
    assertThat(policies.policy("weather").budget().orElseThrow()).isInstanceOf(RedisRetryBudget.class);
    assertThat(policies.policy("other").budget().orElseThrow()).as("not configured as shared")
        .isNotInstanceOf(RedisRetryBudget.class);
  }

  @Test
  void limitsConfiguredAsSharedUseRedis() {
    String answer = Mono.just("sunny")
        .transformDeferred(io.breakwater.Breakwater.limitedBy(limits.concurrency("weather")))
        .transformDeferred(io.breakwater.Breakwater.throttledBy(limits.rate("weather")))
        .block(Duration.ofSeconds(10));
    assertThat(answer).isEqualTo("sunny");
    assertThat(REDIS.command("KEYS", "bw:rate:*")).contains("bw:rate:{weather}");
    assertThat(REDIS.command("KEYS", "bw:limit:*")).contains("bw:limit:{weather}");
  }
}
