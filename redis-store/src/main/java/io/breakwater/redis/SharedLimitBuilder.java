package io.breakwater.redis;

import io.breakwater.internal.limit.SharedSettings;
import java.time.Duration;
import java.util.Objects;
import org.redisson.api.RedissonReactiveClient;

/**
 * What every limit shared through Redis is told about Redis: how long it waits for an answer, what it does when none
 * comes, and where its key lives.
 *
 * @param <B> the builder
 */
public abstract class SharedLimitBuilder<B extends SharedLimitBuilder<B>> {

  final RedissonReactiveClient redisson;
  Duration operationTimeout = SharedSettings.DEFAULT_OPERATION_TIMEOUT;
  boolean failOpen = true;
  String keyPrefix;

  SharedLimitBuilder(RedissonReactiveClient redisson, String keyPrefix) {
    this.redisson = Objects.requireNonNull(redisson, "redisson");
    this.keyPrefix = keyPrefix;
  }

  @SuppressWarnings("unchecked")
  private B self() {
    return (B) this;
  }

  /** The longest a call waits for Redis's answer before the limit fails open or closed. Default 500 ms. */
  public B operationTimeout(Duration operationTimeout) {
    this.operationTimeout = Objects.requireNonNull(operationTimeout, "operationTimeout");
    return self();
  }

  /**
   * When Redis does not answer, refuse calls with {@code STORE_UNAVAILABLE} instead of running them through a local
   * limit with the same settings.
   */
  public B failClosed() {
    this.failOpen = false;
    return self();
  }

  /** When Redis does not answer, run calls through a local limit with the same settings for a second (the default). */
  public B failOpen() {
    this.failOpen = true;
    return self();
  }

  /** The start of the limit's Redis key; the limit's name follows in braces (its hash tag). */
  public B keyPrefix(String keyPrefix) {
    this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
    return self();
  }

  /** The key of the limit called {@code name}, after checking the prefix. */
  String key(String name) {
    if (keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
      throw new IllegalArgumentException("Key prefix '" + keyPrefix + "' contains a brace: the limit's name in braces "
          + "is the key's hash tag; give a prefix without braces, e.g. \"bw:limit:\"");
    }
    return keyPrefix + "{" + name + "}";
  }
}
