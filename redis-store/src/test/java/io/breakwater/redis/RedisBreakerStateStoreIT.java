package io.breakwater.redis;

import static io.breakwater.Breakwater.guardedBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreaker.State;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.redis.testing.RedisProcess;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Four instances of one breaker, each with its own Redisson client, sharing state through a real Redis. Each instance
 * has its own clock with its own origin, as hosts with different uptimes have (monotonic clocks share no origin):
 * A 10 days in, B 1 hour in, C 20 days in, D at zero. The clocks are virtual, so that an open duration never
 * passes while a transition is still on its way, however loaded the machine is.
 */
class RedisBreakerStateStoreIT {

  private static final int INSTANCES = 4;
  private static final Duration OPEN = Duration.ofSeconds(30);

  private RedisProcess redis;
  private RedisClients clients;
  private final List<CircuitBreaker> breakers = new ArrayList<>();
  private final List<VirtualTimeScheduler> clocks = new ArrayList<>();

  @BeforeEach
  void start() {
    redis = RedisProcess.start();
    clients = new RedisClients();
    List<Duration> origins = List.of(Duration.ofDays(10), Duration.ofHours(1), Duration.ofDays(20), Duration.ZERO);
    for (int i = 0; i < INSTANCES; i++) {
      VirtualTimeScheduler clock = VirtualTimeScheduler.create();
      clock.advanceTimeBy(origins.get(i));
      clocks.add(clock);
      breakers.add(CircuitBreaker.builder("search")
          .minimumCalls(5)
          .failureRateThreshold(0.5)
          .openDuration(OPEN)
          .halfOpenProbes(1)
          .rampUp(Duration.ofSeconds(10), 0.1)
          .scheduler(() -> clock)
          .meterRegistry(new SimpleMeterRegistry())
          .stateStore(RedisBreakerStateStore.create(clients.standalone(redis.address())))
          .build());
    }
  }

  private void advanceAll(Duration by) {
    clocks.forEach(clock -> clock.advanceTimeBy(by));
  }

  @AfterEach
  void stop() {
    clients.close();
    redis.close();
  }

  private static void fail(CircuitBreaker breaker, int times) {
    for (int i = 0; i < times; i++) {
      Mono.error(new HttpStatusException(503)).transformDeferred(guardedBy(breaker)).onErrorResume(e -> Mono.empty())
          .block();
    }
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    for (int i = 0; i < 200 && !condition.getAsBoolean(); i++) {
      Thread.sleep(25);
    }
    assertThat(condition.getAsBoolean()).as(what).isTrue();
  }

  /** Each breaker subscribes to its transitions channel when it is built; wait until all of them have. */
  private void awaitSubscribed() throws InterruptedException {
    await("every instance subscribed to the transitions channel", () -> redis.command("PUBSUB", "NUMSUB",
        "bw:breaker:{search}:transitions").endsWith("," + INSTANCES + "]"));
  }

  @Test
  void whenOneInstanceTripsEveryInstanceOpens() throws InterruptedException {
    awaitSubscribed();
    fail(breakers.get(0), 5);

    assertThat(breakers.get(0).state()).isEqualTo(State.OPEN);
    await("all four instances open", () -> breakers.stream().allMatch(b -> b.state() == State.OPEN));
  }

  @Test
  void exactlyOneProbeRunsAcrossFourInstancesInHalfOpen() throws InterruptedException {
    awaitSubscribed();
    fail(breakers.get(0), 5);
    await("all open", () -> breakers.stream().allMatch(b -> b.state() == State.OPEN));
    advanceAll(OPEN); // past the open duration on every clock: every instance may half-open

    AtomicInteger probes = new AtomicInteger();
    Mono<String> slowProbe = Mono.fromCallable(probes::incrementAndGet)
        .delayElement(Duration.ofMillis(300))
        .map(String::valueOf);
    List<String> outcomes = Flux.range(0, INSTANCES * 25)
        .flatMap(i -> slowProbe.transformDeferred(guardedBy(breakers.get(i % INSTANCES)))
            .onErrorResume(e -> Mono.just(e.getClass().getSimpleName()))
            .subscribeOn(Schedulers.parallel()))
        .collectList()
        .block(Duration.ofSeconds(20));

    assertThat(probes).as("probe calls made across the cluster").hasValue(1);
    assertThat(outcomes).filteredOn(o -> o.equals("1")).hasSize(1);
  }

  @Test
  void happyPathSendsNoCommandToRedis() throws InterruptedException {
    awaitSubscribed(); // so that the breakers' own SUBSCRIBE commands are not counted as the calls'
    String statsBefore = redis.command("INFO", "commandstats");
    long before = commands();
    for (CircuitBreaker breaker : breakers) {
      for (int i = 0; i < 1_000; i++) {
        Mono.just(i).transformDeferred(guardedBy(breaker)).block();
      }
    }
    assertThat(commands() - before).as("Redis commands for 4 000 successful calls; before: %s, after: %s",
        statsBefore, redis.command("INFO", "commandstats")).isZero();
  }

  @Test
  void breakersFallBackToLocalStateDuringAnOutage() {
    redis.pause();
    try {
      fail(breakers.get(1), 5);
      assertThat(breakers.get(1).state()).as("local state still trips the breaker").isEqualTo(State.OPEN);
    } finally {
      redis.resume();
    }
  }

  /**
   * Issue 26: transitions carried the sender's clock reading, so instances behind it stayed open for days, instances
   * ahead half-opened at once, and after a remote close the ramp admitted nothing.
   */
  @Test
  void eachInstanceHonoursTheOpenDurationAndTheRampOnItsOwnClock() throws InterruptedException {
    awaitSubscribed();
    fail(breakers.get(0), 5);
    await("all open", () -> breakers.stream().allMatch(b -> b.state() == State.OPEN));
    advanceAll(OPEN.minusSeconds(1));
    assertThat(breakers).as("29 s after the trip").extracting(CircuitBreaker::state).containsOnly(State.OPEN);
    advanceAll(Duration.ofSeconds(1));

    // B probes; the others are rejected (their claims are denied), then its success closes every instance
    Sinks.One<String> answer = Sinks.one();
    AtomicInteger probes = new AtomicInteger();
    Mono.defer(() -> {
      probes.incrementAndGet();
      return answer.asMono();
    }).transformDeferred(guardedBy(breakers.get(1))).subscribe();
    await("B's probe claimed", () -> probes.get() == 1);
    for (CircuitBreaker other : List.of(breakers.get(0), breakers.get(2), breakers.get(3))) {
      assertThat(Mono.fromCallable(probes::incrementAndGet).transformDeferred(guardedBy(other))
          .onErrorResume(e -> Mono.just(-1)).block(Duration.ofSeconds(5))).isEqualTo(-1);
    }
    answer.tryEmitValue("ok");
    await("all closed", () -> breakers.stream().allMatch(b -> b.state() == State.CLOSED));
    assertThat(probes).as("probe calls across the cluster").hasValue(1);

    advanceAll(Duration.ofSeconds(5)); // halfway through the ramp from 10 %: 55 % of calls
    for (CircuitBreaker breaker : breakers) {
      int admitted = 0;
      for (int i = 0; i < 100; i++) {
        admitted += Mono.just(1).transformDeferred(guardedBy(breaker)).onErrorResume(e -> Mono.just(0)).block();
      }
      assertThat(admitted).as("calls of 100 admitted 5 s into the ramp").isEqualTo(55);
    }
  }

  /** Issue 15 (low): braces in the prefix changed the hash tag, putting every breaker's keys in one slot. */
  @Test
  void aKeyPrefixWithBracesIsRefused() {
    for (String prefix : List.of("bw:{all}:", "bw:}")) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> RedisBreakerStateStore.create(
              clients.standalone(redis.address()), prefix, Duration.ofMillis(500)))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("brace");
    }
  }

  /**
   * Issue 14, "also verify": {@code CLAIM} set the lease ({@code PEXPIRE}) only when the count went to 1, so a claim
   * granted while another was held got what was left of the first one's lease: when it ended, two more probes were
   * granted while the later one was still running, three probes for two permits.
   */
  @Test
  void aLaterClaimIsNotCutShortByTheLeaseOfAnEarlierOne() throws InterruptedException {
    RedisBreakerStateStore store = RedisBreakerStateStore.create(clients.standalone(redis.address()));
    Duration lease = Duration.ofMillis(1_000);
    String key = "bw:breaker:{leases}:probes";
    assertThat(store.claimProbe("leases", 2, lease).block(Duration.ofSeconds(5))).isTrue();
    Thread.sleep(600);
    assertThat(store.claimProbe("leases", 2, lease).block(Duration.ofSeconds(5))).isTrue();
    long pttl = Long.parseLong(redis.command("PTTL", key).replaceAll("[^0-9-]", ""));
    assertThat(pttl).as("the second claim's lease, in ms").isGreaterThan(800);

    Thread.sleep(600); // past the first claim's lease, within the second one's
    Boolean third = store.claimProbe("leases", 2, lease).block(Duration.ofSeconds(5));
    Boolean fourth = store.claimProbe("leases", 2, lease).block(Duration.ofSeconds(5));
    assertThat(List.of(third, fourth)).as("claims granted while the second claim is held, with 2 permits")
        .containsOnly(Boolean.FALSE);
  }

  /** Commands Redis processed, other than the ones it answers to keep connections alive. */
  private long commands() {
    String info = redis.command("INFO", "commandstats");
    long total = 0;
    Matcher m = Pattern.compile("cmdstat_([a-z|]+):calls=(\\d+)").matcher(info);
    while (m.find()) {
      if (!m.group(1).equals("ping") && !m.group(1).equals("info")) {
        total += Long.parseLong(m.group(2));
      }
    }
    return total;
  }
}
