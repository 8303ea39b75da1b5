package io.breakwater.redis;

import static io.breakwater.Breakwater.limitedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.LimitExceededException.Reason;
import io.breakwater.redis.testing.RedisProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonReactiveClient;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** A concurrency limit shared by four instances (four Redisson clients) through a real redis-server. */
class RedisConcurrencyLimitIT {

  private RedisProcess redis;
  private RedisClients clients;
  private final List<RedissonReactiveClient> instances = new ArrayList<>();

  @BeforeEach
  void start() {
    redis = RedisProcess.start();
    clients = RedisClients.forLoad();
    for (int i = 0; i < 4; i++) {
      instances.add(clients.standalone(redis.address()));
    }
  }

  @AfterEach
  void stop() {
    clients.close();
    redis.close();
  }

  private static ConcurrencyLimit limit(RedissonReactiveClient redisson, int limit, Duration lease) {
    // a generous operation timeout: on a busy build machine a first command can take longer than the default 500 ms,
    // and this test is about sharing, not about failing open
    return RedisConcurrencyLimit.builder(redisson, ConcurrencyLimit.builder("search").fixed(limit)
            .maxWait(Duration.ofSeconds(30)).build())
        .lease(lease).operationTimeout(Duration.ofSeconds(5)).build();
  }

  @Test
  void fourInstancesNeverHaveMoreThanTheLimitInFlight() throws InterruptedException {
    List<ConcurrencyLimit> limits = instances.stream().map(r -> limit(r, 8, Duration.ofSeconds(10))).toList();
    AtomicInteger inFlight = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(200);
    Mono<String> call = Mono.defer(() -> {
      most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
      return Mono.delay(Duration.ofMillis(20)).thenReturn("ok").doOnTerminate(inFlight::decrementAndGet);
    });
    for (int i = 0; i < 200; i++) {
      call.transformDeferred(limitedBy(limits.get(i % 4))).subscribe(null, e -> done.countDown(), done::countDown);
    }
    assertThat(done.await(60, TimeUnit.SECONDS)).isTrue();
    assertThat(most.get()).as("in flight across the four instances").isBetween(2, 8);
    for (ConcurrencyLimit l : limits) {
      // a Mono's permit goes back with its value, before the caller hears of it
      assertThat(l.inFlight()).isZero();
    }
    // the store hears of the last release on its own instance's connection, a moment after the caller
    await(() -> available(instances.get(0)) == 8);
  }

  @Test
  void aKilledInstancesPermitsComeBackWithinTheirLease() throws InterruptedException {
    Duration lease = Duration.ofSeconds(2);
    List<ConcurrencyLimit> limits = new ArrayList<>();
    for (RedissonReactiveClient r : instances) {
      limits.add(limit(r, 6, lease));
    }
    // the instance that will die takes 3 permits for calls that never end
    List<Sinks.One<String>> never = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Sinks.One<String> s = Sinks.one();
      never.add(s);
      s.asMono().transformDeferred(limitedBy(limits.get(3))).subscribe();
    }
    await(() -> limits.get(3).inFlight() == 3);
    // the three others keep 9 calls waiting or running for as long as the test lasts
    List<Disposable> live = new ArrayList<>();
    AtomicInteger running = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    for (int i = 0; i < 9; i++) {
      ConcurrencyLimit l = limits.get(i % 3);
      live.add(Mono.defer(() -> {
            most.accumulateAndGet(running.incrementAndGet(), Math::max);
            return Mono.delay(Duration.ofMillis(100)).doOnTerminate(running::decrementAndGet);
          })
          .transformDeferred(limitedBy(l)).repeat().subscribe());
    }
    Thread.sleep(1000);
    assertThat(most.get()).as("the dying instance holds 3 of the 6 permits").isLessThanOrEqualTo(3);

    long killed = System.nanoTime();
    clients.shutdown(instances.get(3));   // dies: no release, no renewal
    await(() -> most.get() == 6);
    long back = System.nanoTime() - killed;
    live.forEach(Disposable::dispose);
    System.out.printf("a killed instance's 3 permits came back %d ms after it died (lease %d ms)%n",
        back / 1_000_000, lease.toMillis());
    assertThat(Duration.ofNanos(back)).isLessThanOrEqualTo(lease.plusMillis(1500));
  }

  @Test
  void aPausedRedisLetsCallsThroughALocalLimitOrRefusesThem() throws InterruptedException {
    ConcurrencyLimit open = RedisConcurrencyLimit.builder(instances.get(0),
        ConcurrencyLimit.builder("open").fixed(2).build()).operationTimeout(Duration.ofMillis(300)).build();
    ConcurrencyLimit closed = RedisConcurrencyLimit.builder(instances.get(1),
        ConcurrencyLimit.builder("closed").fixed(2).build()).operationTimeout(Duration.ofMillis(300)).failClosed()
        .build();
    redis.pause();
    try {
      List<String> answers = Flux.range(0, 4).flatMap(i -> Mono.delay(Duration.ofMillis(50)).thenReturn("ok")
              .transformDeferred(limitedBy(open)))
          .collectList().block(Duration.ofSeconds(10));
      assertThat(answers).as("through a local limit of 2").hasSize(4);
      Object refused = Mono.just("x").transformDeferred(limitedBy(closed)).map(Object.class::cast)
          .onErrorResume(Mono::just).block(Duration.ofSeconds(10));
      assertThat(refused).isInstanceOfSatisfying(LimitExceededException.class,
          e -> assertThat(e.reason()).isEqualTo(Reason.STORE_UNAVAILABLE));
    } finally {
      redis.resume();
    }
  }

  @Test
  void anAdaptiveTemplateOrABraceInThePrefixIsRefused() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> RedisConcurrencyLimit.builder(instances.get(0),
            ConcurrencyLimit.adaptive()).build())
        .hasMessageContaining("is adaptive: a shared limit is fixed");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> RedisConcurrencyLimit.builder(instances.get(0),
            ConcurrencyLimit.fixed(2)).keyPrefix("bw:{x}:").build())
        .hasMessageContaining("contains a brace");
  }

  @Test
  void cancellingRacingCallsReturnsEveryPermit() throws InterruptedException {
    List<ConcurrencyLimit> limits = instances.stream().map(r -> limit(r, 5, Duration.ofSeconds(30))).toList();
    for (int round = 0; round < 5; round++) {
      List<Disposable> calls = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        calls.add(Mono.delay(Duration.ofMillis(i % 7 * 3)).transformDeferred(limitedBy(limits.get(i % 4)))
            .subscribe());
      }
      Thread.sleep(round * 5L);
      calls.forEach(Disposable::dispose);
    }
    await(() -> limits.stream().allMatch(l -> l.inFlight() == 0 && l.queued() == 0));
    await(() -> available(instances.get(0)) == 5);
    assertThat(available(instances.get(0))).isEqualTo(5);
  }

  private static int available(RedissonReactiveClient redisson) {
    return redisson.getPermitExpirableSemaphore("bw:limit:{search}").availablePermits().block();
  }

  private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > until) {
        throw new AssertionError("condition not met within 20 s");
      }
      Thread.sleep(10);
    }
  }
}
