package io.breakwater.redis;

import io.breakwater.deadline.Deadline;
import io.breakwater.failure.FailureKind;
import io.breakwater.idempotency.IdempotencyStore;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.redisson.api.RScript;
import org.redisson.api.RScriptReactive;
import org.redisson.api.RedissonReactiveClient;
import org.redisson.client.codec.StringCodec;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
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
 *   <li><b>Fencing.</b> Completion and release succeed only for the owner token that holds the claim.</li>
 *   <li><b>Waiting duplicates</b> are told of completions on one pub/sub channel, subscribed once per store;
 *       {@code idempotentBy} also polls, so a lost message only delays them.</li>
 *   <li><b>Deadlines.</b> No operation waits past the deadline in force, nor past {@code operationTimeout} (default
 *       2 s), whatever Redisson's own timeouts and retries would allow; a timed-out claim fails closed.</li>
 * </ul>
 *
 * <p>Thread-safe; create one per Redisson client and share it. {@link #close()} ends the pub/sub subscription.
 */
public final class RedisIdempotencyStore implements IdempotencyStore, AutoCloseable {

  private static final Logger LOG = Loggers.getLogger(RedisIdempotencyStore.class);

  static final String CLAIM = """
      if redis.replicate_commands then redis.replicate_commands() end
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      local lease = tonumber(ARGV[3])
      local r = redis.call('HMGET', KEYS[1], 'fp', 'owner', 'state', 'exp', 'r', 'k', 'm')
      if not r[1] then
        redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'owner', ARGV[2], 'state', 'F', 'exp', tostring(now + lease))
        redis.call('PEXPIRE', KEYS[1], 2 * lease)
        return {'A', '0'}
      end
      if r[1] ~= ARGV[1] then return {'M', r[1]} end
      if r[3] == 'D' then return {'D', r[5] or '', r[6] or '', r[7] or ''} end
      if r[2] == ARGV[2] then return {'A', '0'} end
      local exp = tonumber(r[4])
      if exp <= now then
        redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'exp', tostring(now + lease))
        redis.call('PEXPIRE', KEYS[1], 2 * lease)
        return {'A', '1'}
      end
      return {'B', tostring(exp - now)}
      """;

  static final String COMPLETE = """
      local r = redis.call('HMGET', KEYS[1], 'owner', 'state')
      if r[1] == ARGV[1] and r[2] == 'F' then
        redis.call('HSET', KEYS[1], 'state', 'D', 'r', ARGV[2], 'k', ARGV[3], 'm', ARGV[4])
        redis.call('HDEL', KEYS[1], 'exp')
        redis.call('PEXPIRE', KEYS[1], ARGV[5])
        redis.call('PUBLISH', ARGV[6], ARGV[7])
        return 1
      end
      return 0
      """;

  static final String RELEASE = """
      local r = redis.call('HMGET', KEYS[1], 'owner', 'state')
      if r[1] == ARGV[1] and r[2] == 'F' then
        redis.call('DEL', KEYS[1])
        redis.call('PUBLISH', ARGV[2], ARGV[3])
        return 1
      end
      return 0
      """;

  private final RedissonReactiveClient redisson;
  private final RScriptReactive scripts;
  private final String keyPrefix;
  private final String channel;
  private final Duration operationTimeout;
  private final ConcurrentMap<String, Sinks.Empty<Void>> waiters = new ConcurrentHashMap<>();
  private final Disposable subscription;

  private RedisIdempotencyStore(Builder b) {
    this.redisson = b.redisson;
    this.scripts = b.redisson.getScript(StringCodec.INSTANCE);
    this.keyPrefix = b.keyPrefix;
    this.channel = b.channel;
    this.operationTimeout = b.operationTimeout;
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

  @Override
  public Mono<Claim> claim(String key, String fingerprint, String owner, Duration lease) {
    long leaseMillis = Math.max(1L, lease.toMillis());
    return bounded(scripts.<List<Object>>eval(redisKey(key), RScript.Mode.READ_WRITE, CLAIM,
            RScript.ReturnType.LIST, List.of(redisKey(key)), fingerprint, owner, Long.toString(leaseMillis)))
        .map(RedisIdempotencyStore::toClaim);
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
    return bounded(scripts.<Long>eval(redisKey(key), RScript.Mode.READ_WRITE, COMPLETE,
            RScript.ReturnType.LONG, List.of(redisKey(key)), owner,
            outcome.resultJson() == null ? "" : outcome.resultJson(),
            outcome.failureKind() == null ? "" : outcome.failureKind().name(),
            outcome.failureMessage() == null ? "" : outcome.failureMessage(),
            Long.toString(Math.max(1L, ttl.toMillis())), channel, key))
        .map(stored -> stored == 1L);
  }

  @Override
  public Mono<Boolean> release(String key, String owner) {
    return bounded(scripts.<Long>eval(redisKey(key), RScript.Mode.READ_WRITE, RELEASE,
            RScript.ReturnType.LONG, List.of(redisKey(key)), owner, channel, key))
        .map(released -> released == 1L);
  }

  /**
   * Waiters of one key in this process share one registration. The first registers before looking at the record
   * (one round trip), so that a completion between the waiters' last claim and this call is never missed; the ones
   * that join while it is registered are woken with it, at no cost in round trips.
   */
  @Override
  public Mono<Void> changed(String key) {
    return Mono.defer(() -> {
      boolean[] first = new boolean[1];
      Sinks.Empty<Void> sink = waiters.computeIfAbsent(key, k -> {
        first[0] = true;
        return Sinks.empty();
      });
      if (first[0]) {
        bounded(scripts.<String>eval(redisKey(key), RScript.Mode.READ_WRITE,
                "return redis.call('HGET', KEYS[1], 'state') or ''", RScript.ReturnType.VALUE,
                List.of(redisKey(key))))
            .subscribe(state -> {
              if (!"F".equals(state)) {
                signal(key);
              }
            }, error -> signal(key));
      }
      return sink.asMono();
    });
  }

  private void signal(String key) {
    Sinks.Empty<Void> sink = waiters.remove(key);
    if (sink != null) {
      sink.tryEmitEmpty();
    }
  }

  /** Bounds an operation by the deadline in force and by {@code operationTimeout}, whichever comes first. */
  private <T> Mono<T> bounded(Mono<T> operation) {
    return Mono.deferContextual(ctx -> {
      Duration limit = Deadline.from(ctx)
          .map(d -> d.remaining().compareTo(operationTimeout) < 0 ? d.remaining() : operationTimeout)
          .orElse(operationTimeout);
      return operation.timeout(limit, Deadline.from(ctx).map(Deadline::scheduler)
          .orElseGet(reactor.core.scheduler.Schedulers::parallel));
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
