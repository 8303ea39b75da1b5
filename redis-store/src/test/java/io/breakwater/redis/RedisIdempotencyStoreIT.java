package io.breakwater.redis;

import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;

import io.breakwater.idempotency.IdempotencyStore.Acquired;
import io.breakwater.idempotency.IdempotencyStore.Busy;
import io.breakwater.idempotency.IdempotencyStore.Done;
import io.breakwater.idempotency.IdempotencyStore.Mismatch;
import io.breakwater.idempotency.IdempotencyStore.Outcome;
import io.breakwater.idempotency.StoreUnavailableException;
import io.breakwater.redis.testing.RedisProcess;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class RedisIdempotencyStoreIT {

  private RedisProcess redis;
  private RedisClients clients;
  private RedisIdempotencyStore store;

  @BeforeEach
  void start() {
    redis = RedisProcess.start();
    clients = new RedisClients();
    store = RedisIdempotencyStore.create(clients.standalone(redis.address()));
  }

  @AfterEach
  void stop() {
    store.close();
    clients.close();
    redis.close();
  }

  @Test
  void claimCompleteAndReplay() {
    assertThat(store.claim("k", "fp", "owner-1", Duration.ofSeconds(30)).block()).isEqualTo(new Acquired(false));
    assertThat(store.claim("k", "fp", "owner-2", Duration.ofSeconds(30)).block()).isInstanceOf(Busy.class);
    assertThat(store.claim("k", "other-fp", "owner-2", Duration.ofSeconds(30)).block())
        .isEqualTo(new Mismatch("fp"));
    assertThat(store.complete("k", "owner-2", Outcome.success("\"stolen\""), Duration.ofHours(1)).block())
        .as("fenced: owner-2 never held the claim").isFalse();
    assertThat(store.complete("k", "owner-1", Outcome.success("\"receipt\""), Duration.ofHours(1)).block()).isTrue();

    assertThat(store.claim("k", "fp", "owner-3", Duration.ofSeconds(30)).block())
        .isEqualTo(new Done(Outcome.success("\"receipt\"")));
    long ttl = Long.parseLong(redis.command("PTTL", "bw:idem:{k}"));
    assertThat(ttl).isBetween(Duration.ofMinutes(59).toMillis(), Duration.ofHours(1).toMillis());
  }

  /**
   * The store sends each script by its SHA-1 ({@code EVALSHA}). A server without it (restarted, failed over,
   * {@code SCRIPT FLUSH}) answers {@code NOSCRIPT} and runs nothing, so the store loads it there and sends it again:
   * every operation still answers, and each changes the record once.
   */
  @Test
  void scriptsFlushedFromRedisAreLoadedAgainAndEachOperationRunsOnce() {
    assertThat(redis.command("SCRIPT", "FLUSH")).isEqualTo("OK");
    assertThat(store.claim("k", "fp", "owner-1", Duration.ofSeconds(30)).block()).isEqualTo(new Acquired(false));
    assertThat(redis.command("SCRIPT", "FLUSH")).isEqualTo("OK");
    assertThat(store.renew("k", "owner-1", Duration.ofSeconds(30)).block()).isTrue();
    assertThat(redis.command("SCRIPT", "FLUSH")).isEqualTo("OK");
    assertThat(store.complete("k", "owner-1", Outcome.success("\"receipt\""), Duration.ofHours(1)).block()).isTrue();
    assertThat(redis.command("SCRIPT", "FLUSH")).isEqualTo("OK");
    assertThat(store.claim("k", "fp", "owner-2", Duration.ofSeconds(30)).block())
        .isEqualTo(new Done(Outcome.success("\"receipt\"")));
    assertThat(redis.command("SCRIPT", "FLUSH")).isEqualTo("OK");
    assertThat(store.claim("free", "fp", "owner-1", Duration.ofSeconds(30)).block()).isEqualTo(new Acquired(false));
    assertThat(redis.command("SCRIPT", "FLUSH")).isEqualTo("OK");
    assertThat(store.release("free", "owner-1").block()).isTrue();
    assertThat(redis.command("EXISTS", "bw:idem:{free}")).isEqualTo("0");
    Matcher evalsha = Pattern.compile("cmdstat_evalsha:calls=([0-9]+),.*,failed_calls=([0-9]+)")
        .matcher(redis.command("INFO", "commandstats"));
    assertThat(evalsha.find()).isTrue();
    assertThat(Long.parseLong(evalsha.group(2))).as("EVALSHAs answered NOSCRIPT").isEqualTo(6);
    assertThat(Long.parseLong(evalsha.group(1)) - Long.parseLong(evalsha.group(2)))
        .as("scripts that ran: one per operation").isEqualTo(6);
  }

  @Test
  void aCompletedKeyCostsAboutOneKibOfRedisMemory() {
    int keys = 2_000;
    String result = "{\"orderId\":\"o-0000000\",\"status\":\"refunded\",\"amountCents\":1999}";
    long before = usedMemory();
    reactor.core.publisher.Flux.range(0, keys)
        .flatMap(i -> {
          String key = "acme:payments.refund:sha256:" + String.format("%064x", i);     // a derived key's shape
          return store.claim(key, "sha256:" + String.format("%064x", i), "owner", Duration.ofMinutes(5))
              .then(store.complete(key, "owner", Outcome.success(result), Duration.ofHours(24)));
        }, 32)
        .blockLast(Duration.ofSeconds(60));
    double perKey = (usedMemory() - before) / (double) keys;

    System.out.printf("Redis memory per completed key: %.0f B (%d keys)%n", perKey, keys);
    assertThat(perKey).as("bytes of used_memory per completed key (measured about 1 000)").isLessThan(2_048);
  }

  private long usedMemory() {
    Matcher used = Pattern.compile("used_memory:(\\d+)").matcher(redis.command("INFO", "memory"));
    assertThat(used.find()).isTrue();
    return Long.parseLong(used.group(1));
  }

  @Test
  void renewalExtendsOnlyTheOwnersLeaseAndAResentCompletionAnswersStored() throws InterruptedException {
    store.claim("k", "fp", "owner-1", Duration.ofMillis(300)).block();
    assertThat(store.renew("k", "owner-2", Duration.ofSeconds(30)).block()).isFalse();
    assertThat(store.renew("k", "owner-1", Duration.ofSeconds(30)).block()).isTrue();
    Thread.sleep(400);
    assertThat(store.claim("k", "fp", "owner-2", Duration.ofSeconds(30)).block()).isInstanceOf(Busy.class);
    long pttl = Long.parseLong(redis.command("PTTL", "bw:idem:{k}"));
    assertThat(pttl).as("the record is kept two leases").isGreaterThan(Duration.ofSeconds(55).toMillis());

    assertThat(store.complete("k", "owner-1", Outcome.success("1"), Duration.ofHours(1)).block()).isTrue();
    assertThat(store.complete("k", "owner-1", Outcome.success("1"), Duration.ofHours(1)).block())
        .as("a resend of a stored completion").isTrue();
    assertThat(store.complete("k", "owner-2", Outcome.success("2"), Duration.ofHours(1)).block()).isFalse();
    assertThat(store.renew("k", "owner-1", Duration.ofSeconds(30)).block()).as("done: nothing to renew").isFalse();
  }

  @Test
  void waitForReplicasGrantsAClaimOnceAReplicaHasItAndFailsClosedWithoutOne() {
    RedisIdempotencyStore alone = RedisIdempotencyStore.builder(clients.standalone(redis.address()))
        .waitForReplicas(1, Duration.ofMillis(200)).build();
    StepVerifier.create(alone.claim("k", "fp", "o", Duration.ofSeconds(30)))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(NotReplicatedException.class)
            .hasMessageContaining("0 replicas of the 1"))
        .verify(Duration.ofSeconds(10));
    // With a replica, WAIT returns as soon as it acknowledges: a long timeout costs nothing when it does, and a
    // loaded machine (a CI run) cannot make a slow acknowledgement look like a missing replica.
    RedisIdempotencyStore replicated = RedisIdempotencyStore.builder(clients.standalone(redis.address()))
        .operationTimeout(Duration.ofSeconds(20)).waitForReplicas(1, Duration.ofSeconds(10)).build();
    try (RedisProcess replica = RedisProcess.start("--replicaof", "127.0.0.1", Integer.toString(redis.port()))) {
      // "state=online" on the primary comes when the snapshot is sent; the replica answers acknowledgements only
      // once it has loaded it and says its link is up
      for (int i = 0; i < 200 && !(redis.command("INFO", "replication").contains("state=online")
          && replica.command("INFO", "replication").contains("master_link_status:up")); i++) {
        LockSupport.parkNanos(100_000_000L);
      }
      assertThat(replicated.claim("k2", "fp", "o", Duration.ofSeconds(30)).block()).isEqualTo(new Acquired(false));
      assertThat(replicated.complete("k2", "o", Outcome.success("1"), Duration.ofHours(1)).block()).isTrue();
      assertThat(replica.command("HGET", "bw:idem:{k2}", "state")).as("on the replica").isEqualTo("D");
    } finally {
      alone.close();
      replicated.close();
    }
  }

  @Test
  void leasesAndTtlsNearLongMaxSaturate() {
    assertThat(store.claim("k", "fp", "o", Duration.ofSeconds(Long.MAX_VALUE)).block()).isEqualTo(new Acquired(false));
    assertThat(store.complete("k", "o", Outcome.success("1"), Duration.ofSeconds(Long.MAX_VALUE)).block()).isTrue();
    assertThat(store.claim("k", "fp", "p", Duration.ofSeconds(1)).block()).isEqualTo(new Done(Outcome.success("1")));
  }

  @Test
  void claimIsIdempotentForItsOwnerSoAResentScriptGetsItsOwnClaimBack() {
    assertThat(store.claim("k", "fp", "owner-1", Duration.ofSeconds(30)).block()).isEqualTo(new Acquired(false));
    assertThat(store.claim("k", "fp", "owner-1", Duration.ofSeconds(30)).block()).isEqualTo(new Acquired(false));
  }

  @Test
  void failuresAreStoredByKindAndReleaseIsFenced() {
    store.claim("k", "fp", "owner-1", Duration.ofSeconds(30)).block();
    assertThat(store.release("k", "owner-2").block()).isFalse();
    assertThat(store.release("k", "owner-1").block()).isTrue();
    assertThat(store.claim("k", "fp", "owner-2", Duration.ofSeconds(30)).block()).isEqualTo(new Acquired(false));
    store.complete("k", "owner-2", Outcome.failure(io.breakwater.failure.FailureKind.BUSINESS, "declined"),
        Duration.ofMinutes(1)).block();

    assertThat(store.claim("k", "fp", "owner-3", Duration.ofSeconds(30)).block())
        .isEqualTo(new Done(Outcome.failure(io.breakwater.failure.FailureKind.BUSINESS, "declined")));
  }

  @Test
  void expiredLeaseIsTakenOverAndReportedAsSuch() throws InterruptedException {
    store.claim("k", "fp", "crashed", Duration.ofMillis(200)).block();
    Thread.sleep(300);
    assertThat(store.claim("k", "fp", "next", Duration.ofSeconds(30)).block()).isEqualTo(new Acquired(true));
    assertThat(store.complete("k", "crashed", Outcome.success("1"), Duration.ofMinutes(1)).block())
        .as("the crashed owner's late completion is fenced off").isFalse();
  }

  @Test
  void hitTakesOneRoundTripAndMissTwo() {
    IdempotencyPolicy policy = IdempotencyPolicy.builder(store).keySecret(RedisClients.KEY_SECRET).build();
    // The first use of each script costs an extra EVALSHA that Redis answers NOSCRIPT; count the steady state.
    Mono.just("warm-up").transformDeferred(idempotentBy(IdempotencyKey.of("flights.search", Map.of("n", 0)),
        policy, String.class)).block();
    IdempotencyKey key = IdempotencyKey.of("flights.search", Map.of("from", "LHR", "to", "JFK"));
    Mono<String> call = Mono.just("flights").transformDeferred(idempotentBy(key, policy, String.class));

    long before = quietScriptCalls();       // the warm-up's completion is stored in the background
    assertThat(call.block()).isEqualTo("flights");
    long afterMiss = settledScriptCalls(before + 2);     // the completion is stored in the background
    assertThat(call.block()).isEqualTo("flights");
    long afterHit = settledScriptCalls(afterMiss + 1);

    assertThat(afterMiss - before).as("round trips for a miss").isEqualTo(2);
    assertThat(afterHit - afterMiss).as("round trips for a hit").isEqualTo(1);
  }

  @Test
  void duplicatesWaitForTheOwnerAndAreToldOfItsCompletion() {
    IdempotencyPolicy policy = IdempotencyPolicy.builder(store).keySecret(RedisClients.KEY_SECRET)
        .pollInterval(Duration.ofMinutes(1)).build();
    IdempotencyKey key = IdempotencyKey.explicit("orders.place", "o-1", Map.of("sku", "A"));
    AtomicInteger executions = new AtomicInteger();
    Mono<Integer> call = Mono.delay(Duration.ofMillis(300)).map(x -> executions.incrementAndGet())
        .transformDeferred(idempotentBy(key, policy, Integer.class));

    StepVerifier.create(Mono.zip(call, call, call))
        .assertNext(results -> assertThat(results.toList()).containsOnly(1))
        .verifyComplete();
    assertThat(executions).hasValue(1);
  }

  /**
   * A completion or release announces itself on the channel only when some process registered a waiter for the key:
   * a miss that no duplicate waits for costs no PUBLISH, and no message to every store that subscribes.
   */
  @Test
  void aCompletionPublishesOnlyWhenSomeProcessWaitsForTheKey() {
    long before = publishes();
    store.claim("alone", "fp", "owner-1", Duration.ofSeconds(30)).block();
    assertThat(store.complete("alone", "owner-1", Outcome.success("1"), Duration.ofHours(1)).block()).isTrue();
    store.claim("released", "fp", "owner-1", Duration.ofSeconds(30)).block();
    assertThat(store.release("released", "owner-1").block()).isTrue();
    assertThat(publishes() - before).as("PUBLISHes with no one waiting").isZero();

    // a waiter in another process (its own client and store) is told of the completion by the channel
    RedisIdempotencyStore other = RedisIdempotencyStore.create(clients.standalone(redis.address()));
    try {
      for (String key : new String[] {"awaited", "awaited-release"}) {
        store.claim(key, "fp", "owner-1", Duration.ofSeconds(30)).block();
        AtomicInteger woken = new AtomicInteger();
        other.changed(key).subscribe(null, null, woken::incrementAndGet);
        awaitRegistration(key);
        assertThat(woken).as("nothing changed yet").hasValue(0);
        long published = publishes();
        assertThat(key.equals("awaited")
            ? store.complete(key, "owner-1", Outcome.success("1"), Duration.ofHours(1)).block()
            : store.release(key, "owner-1").block()).isTrue();
        assertThat(publishes() - published).as("PUBLISHes for " + key).isEqualTo(1);
        for (int i = 0; i < 100 && woken.get() == 0; i++) {
          LockSupport.parkNanos(50_000_000L);
        }
        assertThat(woken).as("the waiter of " + key + " in the other process").hasValue(1);
      }
    } finally {
      other.close();
    }
  }

  /**
   * A crashed owner's record expires without a PUBLISH. Its waiters stop waiting (they poll); a waiter that comes
   * later registers afresh on the next owner's record, so that owner's completion still wakes it.
   */
  @Test
  void aWaiterAfterAnExpiredUnpublishedRecordIsToldOfTheNextOwnersCompletion() {
    store.claim("k", "fp", "crashed", Duration.ofMillis(300)).block();
    Disposable polled = store.changed("k").subscribe();
    awaitRegistration("k");
    for (int i = 0; i < 100 && !redis.command("EXISTS", "bw:idem:{k}").contains("0"); i++) {
      LockSupport.parkNanos(20_000_000L);   // the lease runs out in Redis: the record is gone, nothing published
    }
    polled.dispose();   // the waiter polls and leaves

    assertThat(store.claim("k", "fp", "next", Duration.ofSeconds(30)).block()).isEqualTo(new Acquired(false));
    AtomicInteger woken = new AtomicInteger();
    store.changed("k").subscribe(null, null, woken::incrementAndGet);
    awaitRegistration("k");
    assertThat(store.complete("k", "next", Outcome.success("1"), Duration.ofHours(1)).block()).isTrue();
    for (int i = 0; i < 100 && woken.get() == 0; i++) {
      LockSupport.parkNanos(20_000_000L);
    }
    assertThat(woken).as("the later waiter, told of the next owner's completion").hasValue(1);
  }

  /** The waiter's registration (a script) has reached Redis: the record names that someone waits. */
  private void awaitRegistration(String key) {
    for (int i = 0; i < 100 && !redis.command("HEXISTS", "bw:idem:{" + key + "}", "w").contains("1"); i++) {
      LockSupport.parkNanos(20_000_000L);
    }
  }

  private long publishes() {
    Matcher m = Pattern.compile("cmdstat_publish:calls=(\\d+)").matcher(redis.command("INFO", "commandstats"));
    return m.find() ? Long.parseLong(m.group(1)) : 0L;
  }

  @Test
  void pausedRedisNeverHoldsACallPastItsDeadlineAndWritesFailClosed() {
    IdempotencyPolicy policy = IdempotencyPolicy.builder(
        RedisIdempotencyStore.builder(clients.standalone(redis.address())).operationTimeout(Duration.ofSeconds(30))
            .build()).keySecret(RedisClients.KEY_SECRET).build();
    AtomicInteger executions = new AtomicInteger();
    Mono<Integer> call = Mono.fromCallable(executions::incrementAndGet)
        .transformDeferred(idempotentBy(IdempotencyKey.of("payments.charge", Map.of("order", 1)), policy,
            Integer.class))
        .transformDeferred(withDeadline(Duration.ofMillis(500)));

    redis.pause();
    try {
      long start = System.nanoTime();
      StepVerifier.create(call)
          .expectErrorSatisfies(e -> assertThat(e).isInstanceOfAny(StoreUnavailableException.class,
              io.breakwater.deadline.DeadlineExceededException.class))
          .verify(Duration.ofSeconds(10));
      Duration waited = Duration.ofNanos(System.nanoTime() - start);
      assertThat(waited).as("bounded by the 500 ms deadline, not Redisson's timeouts").isLessThan(Duration.ofSeconds(2));
    } finally {
      redis.resume();
    }
    assertThat(executions).hasValue(0);
  }

  /** Script calls once they stop changing for 300 ms. */
  private long quietScriptCalls() {
    long calls = scriptCalls();
    for (int i = 0; i < 20; i++) {
      LockSupport.parkNanos(300_000_000L);
      long now = scriptCalls();
      if (now == calls) {
        return now;
      }
      calls = now;
    }
    return calls;
  }

  /** Script calls once they reach {@code expected} (or 2 s pass): background completions land a little later. */
  private long settledScriptCalls(long expected) {
    long calls = scriptCalls();
    for (int i = 0; i < 40 && calls < expected; i++) {
      LockSupport.parkNanos(50_000_000L);
      calls = scriptCalls();
    }
    return calls;
  }

  private long scriptCalls() {
    String info = redis.command("INFO", "commandstats");
    long total = 0;
    Matcher m = Pattern.compile("cmdstat_(eval|evalsha):calls=(\\d+)").matcher(info);
    while (m.find()) {
      total += Long.parseLong(m.group(2));
    }
    return total;
  }

}
