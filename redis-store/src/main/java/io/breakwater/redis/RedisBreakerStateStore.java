package io.breakwater.redis;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.breakwater.breaker.BreakerStateStore;
import io.breakwater.breaker.StateTransition;
import io.breakwater.internal.Saturating;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.redisson.api.RScript;
import org.redisson.api.RScriptReactive;
import org.redisson.api.RedissonReactiveClient;
import org.redisson.client.codec.StringCodec;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A {@link BreakerStateStore} in Redis, so that the breakers of one name on every instance open, probe and close
 * together.
 *
 * <pre>{@code
 * BreakerStateStore shared = RedisBreakerStateStore.create(redisson);
 * CircuitBreaker search = CircuitBreaker.builder("search").stateStore(shared).build();
 * }</pre>
 *
 * <ul>
 *   <li><b>Happy path: no round trip.</b> Breakers decide admission locally; the store is used only on a
 *       transition and for a half-open probe claim.</li>
 *   <li><b>Transitions</b> are published as JSON on one pub/sub channel per breaker,
 *       {@code bw:breaker:{<name>}:transitions}, so every instance opens when one trips.</li>
 *   <li><b>Probes.</b> One counter per breaker, {@code bw:breaker:{<name>}:probes}, claimed by a script (one round
 *       trip: {@code INCR}, {@code DECR} again when over {@code permits}, else {@code PEXPIRE lease}): at most
 *       {@code permits} probes run across the cluster; every grant renews the lease, so the claims held lapse
 *       together one lease after the latest one if their holders die.</li>
 *   <li><b>Outages.</b> Every operation gives up after {@code operationTimeout} (default 500 ms); the breaker then
 *       falls back to its local state, as the SPI specifies (a failed claim lets the probe through and is not
 *       released: if the script ran, its lease ends it).</li>
 * </ul>
 */
public final class RedisBreakerStateStore implements BreakerStateStore {

  /**
   * Grants one of {@code ARGV[1]} claims and sets the lease on every grant: the claims held lapse together
   * {@code ARGV[2]} ms after the latest one, so none is cut short by an earlier claim's lease.
   */
  static final String CLAIM = """
      local n = redis.call('INCR', KEYS[1])
      if n > tonumber(ARGV[1]) then
        redis.call('DECR', KEYS[1])
        return 0
      end
      redis.call('PEXPIRE', KEYS[1], ARGV[2])
      return 1
      """;

  static final String RELEASE = """
      local n = tonumber(redis.call('GET', KEYS[1]) or '0')
      if n > 0 then redis.call('DECR', KEYS[1]) end
      return n
      """;

  private final RedissonReactiveClient redisson;
  private final RScriptReactive scripts;
  private final String keyPrefix;
  private final Duration operationTimeout;
  private final ObjectMapper mapper = JsonMapper.builder()
      .addModule(new JavaTimeModule())
      .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
      .build();

  private RedisBreakerStateStore(RedissonReactiveClient redisson, String keyPrefix, Duration operationTimeout) {
    this.redisson = redisson;
    this.scripts = redisson.getScript(StringCodec.INSTANCE);
    this.keyPrefix = keyPrefix;
    this.operationTimeout = operationTimeout;
  }

  /** A store with key prefix {@code bw:breaker:} and a 500 ms operation timeout. */
  public static RedisBreakerStateStore create(RedissonReactiveClient redisson) {
    return create(redisson, "bw:breaker:", Duration.ofMillis(500));
  }

  /**
   * A store with keys {@code <keyPrefix>{<breaker>}:…}: the breaker's name is the Redis Cluster hash tag, so a prefix
   * with braces is refused.
   */
  public static RedisBreakerStateStore create(RedissonReactiveClient redisson, String keyPrefix,
      Duration operationTimeout) {
    Objects.requireNonNull(redisson, "redisson");
    Objects.requireNonNull(keyPrefix, "keyPrefix");
    if (keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
      throw new IllegalArgumentException("keyPrefix has a brace: braces make a Redis Cluster hash tag, which would put "
          + "every breaker's keys in one slot; use a prefix without '{' and '}', e.g. \"bw:breaker:\"");
    }
    if (operationTimeout.isNegative() || operationTimeout.isZero()) {
      throw new IllegalArgumentException("operationTimeout is " + operationTimeout + ": give a positive duration");
    }
    // Reactor's timeout(Duration) throws past 292 years: such a timeout is the longest it takes
    return new RedisBreakerStateStore(redisson, keyPrefix, Saturating.delay(operationTimeout));
  }

  private String key(String breaker, String suffix) {
    return keyPrefix + "{" + breaker + "}:" + suffix;
  }

  @Override
  public Mono<Void> publish(StateTransition transition) {
    return Mono.fromCallable(() -> mapper.writeValueAsString(transition))
        .flatMap(json -> redisson.getTopic(key(transition.breaker(), "transitions"), StringCodec.INSTANCE)
            .publish(json))
        .timeout(operationTimeout)
        .then();
  }

  @Override
  public Flux<StateTransition> transitions(String breaker) {
    return redisson.getTopic(key(breaker, "transitions"), StringCodec.INSTANCE).getMessages(String.class)
        .map(json -> {
          try {
            return mapper.readValue(json, StateTransition.class);
          } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("Unreadable breaker transition on " + key(breaker, "transitions"), e);
          }
        });
  }

  @Override
  public Mono<Boolean> claimProbe(String breaker, int permits, Duration lease) {
    String key = key(breaker, "probes");
    // at most twenty years: PEXPIRE refuses an expiry whose end does not fit, after the script's INCR has counted
    return scripts.<Long>eval(key, RScript.Mode.READ_WRITE, CLAIM, RScript.ReturnType.LONG, List.of(key),
            Integer.toString(permits), Long.toString(RedisIdempotencyStore.millis(lease)))
        .timeout(operationTimeout)
        .map(granted -> granted == 1L);
  }

  @Override
  public Mono<Void> releaseProbe(String breaker) {
    String key = key(breaker, "probes");
    return scripts.<Long>eval(key, RScript.Mode.READ_WRITE, RELEASE, RScript.ReturnType.LONG, List.of(key))
        .timeout(operationTimeout)
        .then();
  }
}
