package io.breakwater.redis;

import static io.breakwater.internal.redis.IdempotencyScripts.CLAIM;
import static io.breakwater.internal.redis.IdempotencyScripts.COMPLETE;
import static io.breakwater.internal.redis.IdempotencyScripts.RELEASE;
import static io.breakwater.internal.redis.IdempotencyScripts.RENEW;
import static io.breakwater.internal.redis.IdempotencyScripts.WAIT;

import io.breakwater.deadline.Deadline;
import io.breakwater.failure.FailureKind;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.internal.ContextKeys;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.StoreCallBound;
import io.breakwater.internal.redis.LuaScript;
import io.breakwater.internal.redis.ScriptPipeline;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.jspecify.annotations.Nullable;
import org.redisson.RedissonReactive;
import org.redisson.api.BatchOptions;
import org.redisson.api.RBatchReactive;
import org.redisson.api.RScript;
import org.redisson.api.RScriptReactive;
import org.redisson.api.RedissonReactiveClient;
import org.redisson.client.codec.StringCodec;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * An {@link IdempotencyStore} in Redis, through Redisson's reactive API, shared by every instance that uses the same
 * Redis.
 *
 * <pre>{@code
 * RedissonReactiveClient redisson = Redisson.create(config).reactive();
 * IdempotencyStore store = RedisIdempotencyStore.create(redisson);
 * refund.transformDeferred(idempotentBy(key, store, Receipt.class));
 * }</pre>
 *
 * <ul>
 *   <li><b>Round trips.</b> A claim is one Lua script: a hit costs one round trip, a miss two (claim, complete).</li>
 *   <li><b>Keys.</b> One small hash per idempotency key, {@code <prefix>{<key>}}; every script touches that one key
 *       only, so it works on a cluster (the braces make the whole key its hash tag).</li>
 *   <li><b>Masters.</b> Every operation is a script run in read-write mode, so it goes to the master: a lagging
 *       replica can never answer a claim.</li>
 *   <li><b>Time.</b> Leases are measured with Redis {@code TIME}, not the clients' clocks.</li>
 *   <li><b>Resends.</b> A claim is idempotent for its owner token: Redisson may send a script again after a response
 *       timeout, and the owner then gets its own claim back.</li>
 *   <li><b>Fencing.</b> Completion, renewal and release succeed only for the owner token that holds the claim; a
 *       completion resent after it was stored answers stored.</li>
 *   <li><b>Durability.</b> By default a claim is acknowledged by the primary alone; {@code waitForReplicas} and
 *       {@code waitForAof} make claims and completions wait for replicas ({@code WAIT}) or AOF fsyncs
 *       ({@code WAITAOF}).</li>
 *   <li><b>Waiting duplicates</b> are told of completions on one pub/sub channel, subscribed once per store;
 *       {@code idempotentBy} also polls, so a lost message only delays them. A completion or release publishes only
 *       when some process marked the record as awaited: a miss no one waits for sends no message.</li>
 *   <li><b>Deadlines.</b> No operation waits past the deadline in force, nor past {@code operationTimeout} (default
 *       2 s), whatever Redisson's own timeouts and retries would allow; a timed-out claim fails closed.</li>
 * </ul>
 *
 * <p>Thread-safe; create one per Redisson client and share it. {@link #close()} ends the pub/sub subscription.
 */
public final class RedisIdempotencyStore implements IdempotencyStore, AutoCloseable {

  private static final Logger LOG = Loggers.getLogger(RedisIdempotencyStore.class);

  private final RedissonReactiveClient redisson;
  private final RScriptReactive scripts;
  /**
   * The same scripts through Redisson's asynchronous API, pipelined when many calls run at once, when the client is
   * Redisson's own (see {@link #eval}).
   */
  private final @Nullable ScriptPipeline pipeline;
  private final String keyPrefix;
  private final String channel;
  private final Duration operationTimeout;
  private final @Nullable BatchOptions durability;
  private final int replicasToWaitFor;
  private final ConcurrentMap<String, Registration> waiters = new ConcurrentHashMap<>();
  private final Disposable subscription;

  private RedisIdempotencyStore(Builder b) {
    this.redisson = b.redisson;
    this.scripts = b.redisson.getScript(StringCodec.INSTANCE);
    this.pipeline = b.redisson instanceof RedissonReactive reactive
        ? new ScriptPipeline(reactive.getCommandExecutor()) : null;
    this.keyPrefix = b.keyPrefix;
    this.channel = b.channel;
    this.operationTimeout = b.operationTimeout;
    this.durability = b.durability;
    this.replicasToWaitFor = b.replicasToWaitFor;
    this.subscription = redisson.getTopic(channel, StringCodec.INSTANCE).getMessages(String.class)
        .subscribe(this::signal, e -> LOG.warn("Idempotency change notifications stopped; waiters will poll", e));
  }

  /** A store with the default key prefix {@code bw:idem:} and channel {@code bw:idem:changed}. */
  public static RedisIdempotencyStore create(RedissonReactiveClient redisson) {
    return builder(redisson).build();
  }

  public static Builder builder(RedissonReactiveClient redisson) {
    return new Builder(redisson);
  }

  private String redisKey(String key) {
    return keyPrefix + "{" + key + "}";
  }

  /**
   * The longest lease or TTL sent to Redis: twenty years. Lua numbers are doubles and the scripts add a lease to
   * Redis {@code TIME} and double it, which must stay an integer below 10^14 to be written back without an exponent.
   */
  static final long MAX_MILLIS = Duration.ofDays(20 * 365).toMillis();

  /** Milliseconds of a duration, at least 1 and at most {@link #MAX_MILLIS}, saturated rather than overflowing. */
  static long millis(Duration duration) {
    if (duration.isNegative() || duration.isZero()) {
      return 1L;
    }
    return Math.min(MAX_MILLIS, Math.max(1L, Saturating.millis(duration)));
  }

  @Override
  public Mono<Claim> claim(String key, String fingerprint, String owner, Duration lease) {
    return bounded(this.<List<Object>>durable(redisKey(key), CLAIM, RScript.ReturnType.LIST, fingerprint, owner,
            Long.toString(millis(lease))))
        .map(RedisIdempotencyStore::toClaim);
  }

  @Override
  public Mono<Boolean> renew(String key, String owner, Duration lease) {
    return bounded(this.<Long>eval(redisKey(key), RENEW, RScript.ReturnType.LONG, owner,
            Long.toString(millis(lease))))
        .map(renewed -> renewed == 1L);
  }

  /**
   * Runs a script on one record, in read-write mode (on the master). Through Redisson's asynchronous API with
   * {@code EVALSHA} of the script's precomputed SHA-1 when the client is Redisson's own ({@link LuaScript#run}): its
   * reactive API reaches the same call through a reflective proxy and wraps each command in a {@code Flux.create} with
   * a queue of its own, and its {@code evalAsync} hashes, cuts and copies per call, which profiles of Redis hits found
   * among the client's largest costs per call. Scripts of calls that run at once go out together, pipelined
   * ({@link ScriptPipeline}). Cancelling the returned Mono leaves the command to run to its end (see
   * {@link LuaScript#run}); the caller no longer waits for it.
   */
  private <R> Mono<R> eval(String redisKey, LuaScript script, RScript.ReturnType type, Object... args) {
    ScriptPipeline piped = pipeline;
    if (piped == null) {
      return scripts.eval(redisKey, RScript.Mode.READ_WRITE, script.text(), type, List.of(redisKey), args);
    }
    return script.run(piped, redisKey, type, args);
  }

  /**
   * Runs a script that changes a record; with a durability setting, in a batch of one followed by {@code WAIT} (or
   * {@code WAITAOF}), failing with {@link NotReplicatedException} when fewer replicas than asked acknowledged it.
   */
  @SuppressWarnings("unchecked")
  private <R> Mono<R> durable(String redisKey, LuaScript script, RScript.ReturnType type, Object... args) {
    if (durability == null) {
      return eval(redisKey, script, type, args);
    }
    return Mono.defer(() -> {
      RBatchReactive batch = redisson.createBatch(durability);
      // subscribing queues the script in the batch; its reply comes back with the batch's result
      batch.getScript(StringCodec.INSTANCE).eval(redisKey, RScript.Mode.READ_WRITE, script.text(), type,
          List.of(redisKey), args).subscribe(null, error -> { });
      return batch.execute().flatMap(result -> result.getSyncedSlaves() < replicasToWaitFor
          ? Mono.error(new NotReplicatedException(result.getSyncedSlaves(), replicasToWaitFor))
          : Mono.justOrEmpty((R) result.getResponses().get(0)));
    });
  }


  private static Claim toClaim(List<Object> reply) {
    String type = String.valueOf(reply.get(0));
    return switch (type) {
      case "A" -> new Acquired("1".equals(String.valueOf(reply.get(1))));
      case "M" -> new Mismatch(String.valueOf(reply.get(1)));
      case "B" -> new Busy(Duration.ofMillis(Long.parseLong(String.valueOf(reply.get(1)))));
      case "D" -> {
        String kind = String.valueOf(reply.get(2));
        yield new Done(kind.isEmpty()
            ? Outcome.success(String.valueOf(reply.get(1)))
            : Outcome.failure(FailureKind.valueOf(kind), String.valueOf(reply.get(3))));
      }
      default -> throw new IllegalStateException("Unexpected claim reply from Redis: type '" + type + "' with "
          + reply.size() + " elements (the elements are not shown: they may hold a stored result)");
    };
  }

  @Override
  public Mono<Boolean> complete(String key, String owner, Outcome outcome, Duration ttl) {
    return bounded(this.<Long>durable(redisKey(key), COMPLETE, RScript.ReturnType.LONG, owner,
            outcome.resultJson() == null ? "" : outcome.resultJson(),
            outcome.failureKind() == null ? "" : outcome.failureKind().name(),
            outcome.failureMessage() == null ? "" : outcome.failureMessage(),
            Long.toString(millis(ttl)), channel, key))
        .map(stored -> stored == 1L);
  }

  @Override
  public Mono<Boolean> release(String key, String owner) {
    return bounded(this.<Long>eval(redisKey(key), RELEASE, RScript.ReturnType.LONG, owner, channel, key))
        .map(released -> released == 1L);
  }

  /**
   * Waiters of one key in this process share one registration. The first registers here and then marks the record as
   * awaited while reading its state (one round trip), so that a completion between the waiters' last claim and this
   * call is never missed: it either came before the mark (the state says so) or publishes because of it. The ones
   * that join while it is registered are woken with it, at no cost in round trips. A registration goes when its last
   * waiter leaves (a waiter polls, and leaves when the poll comes first), so that a record gone without a publish (a
   * crashed owner's, expired) holds no registration: the next waiter registers again, on the record there now.
   */
  @Override
  public Mono<Void> changed(String key) {
    return Mono.defer(() -> {
      boolean[] first = new boolean[1];
      Registration registration = waiters.compute(key, (k, r) -> {
        Registration joined = r;
        if (joined == null) {
          first[0] = true;
          joined = new Registration();
        }
        joined.waiting++;
        return joined;
      });
      if (first[0]) {
        bounded(this.<String>eval(redisKey(key), WAIT, RScript.ReturnType.VALUE))
            .subscribe(state -> {
              if (!"F".equals(state)) {
                signal(key);
              }
            }, error -> signal(key));
      }
      return registration.woken.asMono().doFinally(signal -> waiters.computeIfPresent(key,
          (k, r) -> r == registration && --r.waiting == 0 ? null : r));
    });
  }

  private void signal(String key) {
    Registration registration = waiters.remove(key);
    if (registration != null) {
      registration.woken.tryEmitEmpty();
    }
  }

  /** The waiters of one key in this process; {@code waiting} is changed only inside the map's atomic steps. */
  private static final class Registration {
    final Sinks.Empty<Void> woken = Sinks.empty();
    int waiting;
  }

  /**
   * Bounds an operation by the deadline in force and by {@code operationTimeout}, whichever comes first; with no timer
   * of its own when the caller (such as {@code idempotentBy}) already bounds the call by no more than that.
   */
  private <T> Mono<T> bounded(Mono<T> operation) {
    return Mono.deferContextual(ctx -> {
      Deadline deadline = Deadline.from(ctx).orElse(null);
      Duration limit = operationTimeout;
      if (deadline != null) {
        Duration remaining = deadline.remaining();
        limit = remaining.compareTo(operationTimeout) < 0 ? remaining : operationTimeout;
      }
      Object callersBound = ctx.getOrDefault(ContextKeys.STORE_CALL_BOUND, null);
      if (callersBound instanceof Duration bound && bound.compareTo(limit) <= 0) {
        return operation;     // the caller's timer, armed before this call was subscribed, fires no later
      }
      return StoreCallBound.within(operation, limit, deadline == null ? Schedulers.parallel() : deadline.scheduler());
    });
  }

  @Override
  public void close() {
    subscription.dispose();
  }

  /** Builds a {@link RedisIdempotencyStore}. */
  public static final class Builder {
    private final RedissonReactiveClient redisson;
    private String keyPrefix = "bw:idem:";
    private String channel = "bw:idem:changed";
    private Duration operationTimeout = Duration.ofSeconds(2);
    private @Nullable BatchOptions durability;
    private int replicasToWaitFor;

    private Builder(RedissonReactiveClient redisson) {
      this.redisson = Objects.requireNonNull(redisson, "redisson");
    }

    /** Prefix of every record's key; default {@code bw:idem:}. */
    public Builder keyPrefix(String keyPrefix) {
      this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
      return this;
    }

    /** The pub/sub channel that announces completions; default {@code bw:idem:changed}. */
    public Builder channel(String channel) {
      this.channel = Objects.requireNonNull(channel, "channel");
      return this;
    }

    /** The longest any one operation may take, even with more time left before the deadline; default 2 s. */
    public Builder operationTimeout(Duration operationTimeout) {
      this.operationTimeout = Objects.requireNonNull(operationTimeout, "operationTimeout");
      return this;
    }

    /**
     * Claims and completions wait until {@code replicas} replicas have them ({@code WAIT}), at most {@code timeout};
     * fewer acknowledgements fail the operation with {@link NotReplicatedException}: a claim then fails closed, a
     * completion is retried. Closes the window in which a failover to a replica loses an acknowledged claim, at the
     * cost of a replication round trip per claim and completion (see {@code docs/redis.md}).
     */
    public Builder waitForReplicas(int replicas, Duration timeout) {
      return durability(BatchOptions.defaults().sync(replicas, timeout), replicas, timeout);
    }

    /**
     * Claims and completions wait until they are fsynced to the primary's AOF ({@code localFsync} = 1) and to
     * {@code replicas} replicas' AOFs ({@code WAITAOF}, Redis 7.2 or newer), at most {@code timeout}.
     */
    public Builder waitForAof(int localFsync, int replicas, Duration timeout) {
      if (localFsync < 0 || localFsync > 1) {
        throw new IllegalArgumentException("localFsync is " + localFsync + ": give 0 or 1 (the primary's own AOF)");
      }
      return durability(BatchOptions.defaults().syncAOF(localFsync, replicas, timeout), replicas, timeout);
    }

    private Builder durability(BatchOptions options, int replicas, Duration timeout) {
      if (replicas < 0) {
        throw new IllegalArgumentException("replicas is " + replicas + ": give 0 or more");
      }
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("the replication timeout is " + timeout + ": give a positive duration, "
            + "shorter than operationTimeout");
      }
      this.durability = options;
      this.replicasToWaitFor = replicas;
      return this;
    }

    public RedisIdempotencyStore build() {
      if (operationTimeout.isNegative() || operationTimeout.isZero()) {
        throw new IllegalArgumentException("operationTimeout is " + operationTimeout + ": give a positive duration");
      }
      if (keyPrefix.contains("{") || keyPrefix.contains("}")) {
        throw new IllegalArgumentException("keyPrefix '" + keyPrefix + "' contains a brace: the store adds the hash "
            + "tag itself, so give a plain prefix such as 'bw:idem:'");
      }
      return new RedisIdempotencyStore(this);
    }
  }
}
