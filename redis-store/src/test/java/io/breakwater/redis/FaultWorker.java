package io.breakwater.redis;

import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.withDeadline;

import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.idempotency.IdempotencyContext;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.StoreUnavailableException;
import io.breakwater.idempotency.WriteOutcomeUnknownException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.redisson.config.ReadMode;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * One worker process of {@link FaultsAcrossProcessesIT}: calls every key once through {@code idempotentBy} with a
 * {@link RedisIdempotencyStore}, and its side effect appends {@code <key> <worker>} to a ledger file with a
 * synchronous write ({@code DSYNC}), so that the ledger survives every fault, the worker's own {@code kill -9}
 * included. Callers retry typed refusals. With {@code checkOwner}, the side effect does what
 * {@code docs/idempotency.md} recommends for effects that cannot be undone: it refuses to run unless
 * {@code stillOwner()}, and after a takeover ({@code tookOverExpired()}) it asks the downstream system (the ledger)
 * whether the previous owner already ran it. A key met as of unknown outcome ({@link WriteOutcomeUnknownException}:
 * an earlier call's write may have happened, so it is not sent again) is done with too: the worker appends
 * {@code <key> <worker> unknown} to the ledger. Prints {@code FINISHED <ok> <unknown> <failed>} at the end.
 *
 * <p>Arguments: {@code <redis://host:port | sentinel://host:port/master> <worker> <keys> <ledger> <lease ms>
 * <check stillOwner: true|false> <replicas to WAIT for> [<answer ms> [<calls in flight>]]}: 8 calls in flight unless told; with an answer time, the side effect's
 * answer is fetched that long after its ledger line is written, with a round trip to Redis (a dependency that takes
 * the write, then answers over the network); without, it answers at once.
 */
public final class FaultWorker {

  /** The side effect refuses to run on a claim it may no longer hold. */
  static final class LeaseLostException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    LeaseLostException() {
      super("the lease is at risk; not running the side effect");
    }
  }

  /** The ledger's mark of a key met as of unknown outcome. */
  static final String UNKNOWN = "unknown";

  private FaultWorker() {}

  public static void main(String[] args) throws IOException {
    String redis = args[0];
    String worker = args[1];
    int keys = Integer.parseInt(args[2]);
    Path ledger = Path.of(args[3]);
    Duration lease = Duration.ofMillis(Long.parseLong(args[4]));
    boolean checkOwner = Boolean.parseBoolean(args[5]);
    int replicas = Integer.parseInt(args[6]);
    Duration answer = Duration.ofMillis(args.length > 7 ? Long.parseLong(args[7]) : 0);
    int inFlight = args.length > 8 ? Integer.parseInt(args[8]) : 8;

    RedissonClient client = Redisson.create(config(redis));
    Mono<Object> receipt = Mono.defer(() -> client.reactive().getBucket("fault-worker:receipt").get());
    RedisIdempotencyStore.Builder storeBuilder = RedisIdempotencyStore.builder(client.reactive())
        .operationTimeout(Duration.ofSeconds(1));
    if (replicas > 0) {
      storeBuilder.waitForReplicas(replicas, Duration.ofMillis(500));
    }
    RedisIdempotencyStore store = storeBuilder.build();
    IdempotencyPolicy policy = IdempotencyPolicy.builder(store).keySecret(RedisClients.KEY_SECRET).lease(lease)
        .pollInterval(Duration.ofMillis(250)).build();
    List<Integer> order = new ArrayList<>();
    for (int k = 0; k < keys; k++) {
      order.add(k);
    }
    Collections.shuffle(order, new Random(worker.hashCode()));
    AtomicInteger ok = new AtomicInteger();
    AtomicInteger unknown = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    try (FileChannel out = FileChannel.open(ledger, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.APPEND, StandardOpenOption.DSYNC)) {
      Flux.fromIterable(order)
          .flatMap(k -> call(k, worker, policy, out, ledger, checkOwner, answer, receipt)
              .doOnNext(x -> ok.incrementAndGet())
              .onErrorResume(WriteOutcomeUnknownException.class, e -> append(out, k + " " + worker + " " + UNKNOWN)
                  .doOnNext(x -> unknown.incrementAndGet()))
              .onErrorResume(e -> {
                failed.incrementAndGet();
                System.out.println("FAILED " + k + " " + e.getClass().getSimpleName());
                return Mono.empty();
              }), inFlight)
          .blockLast(Duration.ofMinutes(4));
    } finally {
      System.out.println("FINISHED " + ok.get() + " " + unknown.get() + " " + failed.get());
      System.out.flush();
      store.close();
      client.shutdown();
    }
  }

  /** Appends {@code line} to the ledger: a synchronous write ({@code DSYNC}). */
  private static void write(FileChannel ledger, String line) throws IOException {
    ledger.write(ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.US_ASCII)));
  }

  /** {@link #write} off the event loops; emits the line. */
  private static Mono<String> append(FileChannel ledger, String line) {
    return Mono.fromCallable(() -> {
      write(ledger, line);
      return line;
    }).subscribeOn(Schedulers.boundedElastic());
  }

  /** The downstream system's own record: the ledger line of key {@code k}, as a result, if there is one. */
  private static String alreadyDone(Path ledger, int k) throws IOException {
    for (String line : java.nio.file.Files.readAllLines(ledger, StandardCharsets.US_ASCII)) {
      String[] parts = line.trim().split(" ");
      if (parts.length == 2 && parts[0].equals(Integer.toString(k))) {
        return k + ":" + parts[1];
      }
    }
    return null;
  }

  private static Mono<String> call(int k, String worker, IdempotencyPolicy policy, FileChannel ledger,
      Path ledgerPath, boolean checkOwner, Duration answer, Mono<Object> receipt) {
    IdempotencyKey key = IdempotencyKey.of("payments.charge", Map.of("order", k));
    Mono<String> sideEffect = Mono.delay(Duration.ofMillis(3))
        .then(Mono.deferContextual(ctx -> Mono.fromCallable(() -> {
          IdempotencyContext claim = IdempotencyContext.current(ctx).orElseThrow();
          if (checkOwner && !claim.stillOwner()) {
            throw new LeaseLostException();
          }
          if (checkOwner && claim.tookOverExpired()) {
            // the previous owner may have run it and died (or froze) before recording it: ask downstream first
            String done = alreadyDone(ledgerPath, k);
            if (done != null) {
              return done;
            }
          }
          write(ledger, k + " " + worker);
          return k + ":" + worker;
        }).subscribeOn(Schedulers.boundedElastic())));
    return (answer.isZero() ? sideEffect : sideEffect.delayElement(answer).flatMap(receipt::thenReturn))
        .transformDeferred(idempotentBy(key, policy, String.class))
        .transformDeferred(withDeadline(Duration.ofSeconds(5)))
        .retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(100)).maxBackoff(Duration.ofSeconds(1))
            .filter(e -> e instanceof StoreUnavailableException || e instanceof DeadlineExceededException
                || e instanceof LeaseLostException))
        .timeout(Duration.ofMinutes(3));
  }

  /** Redisson settings that hold on 2 shared cores (see docs/redis.md). */
  static Config config(String redis) {
    Config config = new Config().setThreads(2).setNettyThreads(4);
    if (redis.startsWith("sentinel://")) {
      String rest = redis.substring("sentinel://".length());
      config.useSentinelServers()
          .setMasterName(rest.substring(rest.indexOf('/') + 1))
          .addSentinelAddress("redis://" + rest.substring(0, rest.indexOf('/')))
          .setCheckSentinelsList(false)
          .setReadMode(ReadMode.MASTER)
          .setMasterConnectionMinimumIdleSize(8).setMasterConnectionPoolSize(16)
          .setTimeout(3_000).setRetryAttempts(1);
    } else {
      config.useSingleServer().setAddress(redis)
          .setConnectionMinimumIdleSize(8).setConnectionPoolSize(16)
          .setTimeout(3_000).setRetryAttempts(1);
    }
    return config;
  }
}
