package io.breakwater.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.internal.redis.LuaScript;
import io.breakwater.internal.redis.ScriptPipeline;
import io.breakwater.redis.testing.RedisCluster;
import io.breakwater.redis.testing.RedisProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.RedissonReactive;
import org.redisson.api.RScript;
import org.redisson.client.RedisException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The idempotency store's scripts go out pipelined when many calls run at once: each still runs once, on its own, and
 * answers its own caller, whatever the scripts beside it in the batch do.
 */
class ScriptPipelineIT {

  /** Counts its runs on its key and answers the key and its argument. */
  private static final LuaScript ECHO = LuaScript.of(
      "local runs = redis.call('INCR', KEYS[1]) "
          + "if ARGV[1] == 'fail' then return redis.error_reply('refused ' .. KEYS[1]) end "
          + "return {KEYS[1], ARGV[1], runs}");

  private RedisProcess redis;
  private RedisClients clients;
  private ScriptPipeline pipeline;

  @BeforeEach
  void start() {
    redis = RedisProcess.start();
    clients = new RedisClients();
    pipeline = new ScriptPipeline(((RedissonReactive) clients.standalone(redis.address())).getCommandExecutor());
  }

  @AfterEach
  void stop() {
    clients.close();
    redis.close();
  }

  private Mono<List<Object>> echo(int i, String arg) {
    return ECHO.run(pipeline, "k" + i, RScript.ReturnType.LIST, arg);
  }

  @Test
  void concurrentScriptsGoOutTogetherAndEachRunsOnceAndAnswersItsOwnCaller() {
    int calls = 2_000;
    Map<Integer, List<Object>> replies = new ConcurrentHashMap<>();
    Flux.range(0, calls)
        .flatMap(i -> echo(i, "a" + i).subscribeOn(Schedulers.parallel()).doOnNext(r -> replies.put(i, r)), 256)
        .blockLast(Duration.ofSeconds(30));

    assertThat(replies).hasSize(calls);
    replies.forEach((i, reply) -> assertThat(reply).as("call %d", i).containsExactly("k" + i, "a" + i, 1L));
    assertThat(pipeline.sends()).as("sends for %d concurrent scripts", calls).isLessThan(calls / 4).isPositive();
    assertThat(redis.command("GET", "k0")).isEqualTo("1");
    assertThat(redis.command("GET", "k" + (calls - 1))).isEqualTo("1");
  }

  /**
   * A script whose caller left while it waited for a place (cancelled, or timed out as a store bounds its calls) is
   * never sent: a claim sent after its caller was told it failed would hold the key for a lease.
   */
  @Test
  void aScriptWhoseCallerLeftWhileItWaitedForAPlaceIsNeverSent() {
    LuaScript slow = LuaScript.of("local t = redis.call('TIME') local start = t[1] * 1000000 + t[2] "
        + "repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - start >= 100000 "
        + "return redis.call('INCR', KEYS[1])");
    assertThat(slow.<Long>run(pipeline, "warm", RScript.ReturnType.LONG).block(Duration.ofSeconds(5))).isOne();
    assertThat(echo(-1, "warm").block(Duration.ofSeconds(5))).containsExactly("k-1", "warm", 1L);
    List<Mono<Long>> holding = new ArrayList<>();
    for (int i = 0; i < 4; i++) {   // every place taken, each send held 100 ms by Redis
      holding.add(slow.<Long>run(pipeline, "slow" + i, RScript.ReturnType.LONG).cache());
      holding.get(i).subscribe();
    }
    echo(0, "gave up").subscribe().dispose();   // queued behind them; its caller leaves (a timeout cancels alike)
    Flux.merge(holding).blockLast(Duration.ofSeconds(10));
    assertThat(echo(1, "after").block(Duration.ofSeconds(5))).containsExactly("k1", "after", 1L);

    assertThat(redis.command("EXISTS", "k0")).as("runs of the script whose caller left").isEqualTo("0");
  }

  @Test
  void aScriptAloneGoesOutAtOnceAlone() {
    assertThat(echo(-1, "a").block(Duration.ofSeconds(5))).containsExactly("k-1", "a", 1L);
    long loaded = pipeline.sends();   // the first EVALSHA was answered NOSCRIPT and sent again
    for (int i = 0; i < 5; i++) {
      assertThat(echo(i, "a").block(Duration.ofSeconds(5))).containsExactly("k" + i, "a", 1L);
    }
    assertThat(pipeline.sends() - loaded).isEqualTo(5);
  }

  @Test
  void aScriptThatFailsInABatchFailsItsOwnCallerOnly() {
    int calls = 1_000;
    Map<Integer, Object> outcomes = new ConcurrentHashMap<>();
    Flux.range(0, calls)
        .flatMap(i -> echo(i, i % 3 == 0 ? "fail" : "ok").subscribeOn(Schedulers.parallel())
            .<Object>map(reply -> reply)
            .onErrorResume(RedisException.class, e -> Mono.just(e))
            .doOnNext(o -> outcomes.put(i, o)), 256)
        .blockLast(Duration.ofSeconds(30));

    assertThat(outcomes).hasSize(calls);
    outcomes.forEach((i, outcome) -> {
      if (i % 3 == 0) {
        assertThat(outcome).as("call %d", i).isInstanceOf(RedisException.class);
        assertThat(((RedisException) outcome).getMessage()).contains("refused k" + i);
      } else {
        assertThat(outcome).as("call %d", i).isEqualTo(List.of("k" + i, "ok", 1L));
      }
    });
    assertThat(pipeline.sends()).isLessThan(calls / 4);
  }

  @Test
  void scriptsFlushedFromRedisAreLoadedAgainAndEachOfABatchRunsOnce() {
    int calls = 1_000;
    assertThat(echo(-1, "a").block(Duration.ofSeconds(5))).containsExactly("k-1", "a", 1L);
    assertThat(redis.command("SCRIPT", "FLUSH")).isEqualTo("OK");

    Map<Integer, List<Object>> replies = new ConcurrentHashMap<>();
    Flux.range(0, calls)
        .flatMap(i -> echo(i, "a").subscribeOn(Schedulers.parallel()).doOnNext(r -> replies.put(i, r)), 256)
        .blockLast(Duration.ofSeconds(30));

    assertThat(replies).hasSize(calls);
    replies.forEach((i, reply) -> assertThat(reply).as("call %d: ran once", i).containsExactly("k" + i, "a", 1L));
  }

  @Test
  void redisKilledWhileBatchesAreInFlightFailsEveryWaitingScriptAndLeavesNoneHanging() throws InterruptedException {
    int calls = 2_000;
    Map<Integer, Object> outcomes = new ConcurrentHashMap<>();
    // each script holds Redis about 2 ms: scripts queue behind the sends in flight while Redis dies
    LuaScript slow = LuaScript.of("local t = redis.call('TIME') local start = t[1] * 1000000 + t[2] "
        + "repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - start >= 2000 "
        + "return redis.call('INCR', KEYS[1])");
    Flux.range(0, calls)
        .flatMap(i -> slow.<Long>run(pipeline, "s" + i, RScript.ReturnType.LONG)
            .<Object>map(runs -> runs)
            .onErrorResume(e -> Mono.just(e))
            .doOnNext(o -> outcomes.put(i, o)), 256)
        .subscribe();
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (outcomes.size() < 50 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(outcomes.size()).as("answered before the kill").isBetween(50, calls - 1);
    redis.kill();

    deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (outcomes.size() < calls && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(outcomes).as("every call has its outcome").hasSize(calls);
    long failed = outcomes.values().stream().filter(o -> o instanceof Throwable).count();
    assertThat(failed).as("calls failed by the kill").isPositive();
    outcomes.values().stream().filter(o -> !(o instanceof Throwable))
        .forEach(runs -> assertThat(runs).as("a script that answered ran once").isEqualTo(1L));
  }

  @Test
  void aPausedClusterNodeHoldsBackOnlyItsOwnScriptsNotThoseOfTheOtherNodes() {
    try (RedisCluster cluster = RedisCluster.start(); RedisClients clusterClients = new RedisClients()) {
      ScriptPipeline clustered = new ScriptPipeline(
          ((RedissonReactive) clusterClients.cluster(cluster.addresses())).getCommandExecutor());
      RedisProcess paused = cluster.nodes().get(0);
      List<String> pausedKeys = keysServedBy(cluster, 0, 64);
      List<String> liveKeys = keysServedBy(cluster, 1, 256);
      for (String key : List.of(pausedKeys.get(0), liveKeys.get(0))) {   // scripts loaded on both masters
        assertThat(ECHO.<List<Object>>run(clustered, key, RScript.ReturnType.LIST, "warm")
            .block(Duration.ofSeconds(10)))
            .containsExactly(key, "warm", 1L);
      }
      paused.pause();
      try {
        Flux.fromIterable(pausedKeys)
            .flatMap(key -> ECHO.<List<Object>>run(clustered, key, RScript.ReturnType.LIST, "stuck")
                .onErrorResume(e -> Mono.empty()))
            .subscribe();

        long started = System.nanoTime();
        List<List<Object>> live = Flux.fromIterable(liveKeys)
            .flatMap(key -> ECHO.<List<Object>>run(clustered, key, RScript.ReturnType.LIST, "live"), 32)
            .collectList()
            .block(Duration.ofSeconds(30));
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        assertThat(live).hasSize(liveKeys.size()).allSatisfy(reply -> assertThat(reply.get(1)).isEqualTo("live"));
        assertThat(took).as("the live master's scripts, while the paused one holds %d", pausedKeys.size())
            .isLessThan(Duration.ofSeconds(1));
      } finally {
        paused.resume();
      }
    }
  }

  /**
   * Scripts for two masters wait together; the first master answers NOSCRIPT at once, the second is paused a moment.
   * Had they gone out as one batch, Redisson would fail the whole batch with that NOSCRIPT and every unanswered command
   * of it with the same exception: the second master's caller, told NOSCRIPT, would load the script and send it again
   * while the first send is still queued on the paused master, and the script would run twice.
   */
  @Test
  void noScriptOnOneMasterNeverMakesAScriptOfAnotherMasterRunTwice() throws InterruptedException {
    try (RedisCluster cluster = RedisCluster.start(); RedisClients clusterClients = new RedisClients()) {
      BehindAPausedMaster run = new BehindAPausedMaster(cluster, clusterClients);
      assertThat(cluster.nodes().get(0).command("SCRIPT", "FLUSH")).isEqualTo("OK");

      Map<String, Object> outcomes = run.waitTogether("batched", "batched");

      assertThat(outcomes.get(run.first)).isEqualTo(List.of(run.first, "batched", 1L));
      assertThat(run.paused.command("GET", run.victim)).as("runs of the script sent once on %s", run.victim)
          .isEqualTo("1");
      assertThat(outcomes.get(run.victim)).as("outcome of %s", run.victim)
          .isEqualTo(List.of(run.victim, "batched", 1L));
    }
  }

  /**
   * The same with a Lua error on the first master: had the scripts gone out as one batch, the second master's caller
   * would be failed with the first script's error (about another key) while its own script ran.
   */
  @Test
  void aLuaErrorOnOneMasterFailsNoScriptOfAnotherMaster() throws InterruptedException {
    try (RedisCluster cluster = RedisCluster.start(); RedisClients clusterClients = new RedisClients()) {
      BehindAPausedMaster run = new BehindAPausedMaster(cluster, clusterClients);

      Map<String, Object> outcomes = run.waitTogether("fail", "ok");

      assertThat(run.paused.command("GET", run.victim)).isEqualTo("1");
      assertThat(outcomes.get(run.victim)).as("outcome of %s", run.victim).isEqualTo(List.of(run.victim, "ok", 1L));
    }
  }

  /**
   * A cluster whose master 1 is paused while four of its scripts hold every place in flight, so that a script of
   * master 0 ({@link #first}) and one of master 1 ({@link #victim}) then wait for the next send together.
   */
  private static final class BehindAPausedMaster {
    final ScriptPipeline pipeline;
    final RedisProcess paused;
    final List<String> pausedKeys;
    final String first;
    final String victim;

    BehindAPausedMaster(RedisCluster cluster, RedisClients clients) {
      pipeline = new ScriptPipeline(((RedissonReactive) clients.cluster(cluster.addresses())).getCommandExecutor());
      paused = cluster.nodes().get(1);
      List<String> firstKeys = keysServedBy(cluster, 0, 2);
      pausedKeys = keysServedBy(cluster, 1, 6);
      first = firstKeys.get(0);
      victim = pausedKeys.get(4);
      for (String key : List.of(firstKeys.get(1), pausedKeys.get(5))) {   // scripts loaded on both masters
        assertThat(ECHO.<List<Object>>run(pipeline, key, RScript.ReturnType.LIST, "warm")
            .block(Duration.ofSeconds(10))).containsExactly(key, "warm", 1L);
      }
    }

    /**
     * The outcomes of the six scripts by key: {@link #first} sent with {@code firstArg}, {@link #victim} with
     * {@code victimArg}.
     */
    Map<String, Object> waitTogether(String firstArg, String victimArg) throws InterruptedException {
      Map<String, Object> outcomes = new ConcurrentHashMap<>();
      paused.pause();
      try {
        for (int i = 0; i < 4; i++) {   // four sends in flight: the next scripts wait and go out together
          send(pausedKeys.get(i), "fill", outcomes);
        }
        send(first, firstArg, outcomes);
        send(victim, victimArg, outcomes);
        Thread.sleep(500);
      } finally {
        paused.resume();
      }
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (outcomes.size() < 6 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      Thread.sleep(200);   // a script sent twice would have run again by now
      return outcomes;
    }

    private void send(String key, String arg, Map<String, Object> outcomes) {
      ECHO.<List<Object>>run(pipeline, key, RScript.ReturnType.LIST, arg)
          .subscribe(r -> outcomes.put(key, r), e -> outcomes.put(key, e));
    }
  }

  /** {@code n} keys whose slots master {@code node} of {@code cluster} serves (slots split evenly, in order). */
  private static List<String> keysServedBy(RedisCluster cluster, int node, int n) {
    int masters = cluster.nodes().size();
    List<String> keys = new ArrayList<>();
    for (int i = 0; keys.size() < n; i++) {
      String key = "n" + node + "-" + i;
      int slot = Integer.parseInt(cluster.nodes().get(node).command("CLUSTER", "KEYSLOT", key).trim());
      if (slot * masters / 16384 == node) {
        keys.add(key);
      }
    }
    return keys;
  }
}
