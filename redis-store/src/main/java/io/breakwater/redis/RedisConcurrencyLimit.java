package io.breakwater.redis;

import io.breakwater.internal.limit.ConcurrencyEngine;
import io.breakwater.internal.limit.SharedSettings;
import io.breakwater.limit.ConcurrencyLimit;
import java.time.Duration;
import java.util.Objects;
import org.redisson.api.RedissonReactiveClient;

/**
 * A {@link ConcurrencyLimit} shared by every instance through Redis: at most {@code limit} calls in flight across all
 * of them. It takes its name and settings (limit, {@code maxWait}, {@code maxQueue}, scheduler) from an in-memory limit
 * used as a template; its permits are a Redisson {@code RPermitExpirableSemaphore}, {@code bw:limit:{<name>}}.
 *
 * <pre>{@code
 * ConcurrencyLimit search = RedisConcurrencyLimit.builder(redisson,
 *     ConcurrencyLimit.builder("search").fixed(20).maxWait(Duration.ofSeconds(2)).build()).build();
 * client.search(query).transformDeferred(limitedBy(search));
 * }</pre>
 *
 * <ul>
 *   <li><b>One script per acquire.</b> A call takes a permit with one {@code tryAcquire} (a Lua script that also
 *       frees expired permits); it gives it back with one {@code tryRelease}.</li>
 *   <li><b>Leases.</b> Every permit is leased for {@code lease} (default 30 s) and renewed every third of it while its
 *       call runs, so the permits of an instance that dies come back within a lease.</li>
 *   <li><b>Waiting.</b> The calls of an instance wait in a local FIFO, bounded as for {@link ConcurrencyLimit}; its head
 *       asks again when a permit of this instance comes back, and every {@code pollInterval} (default 50 ms).</li>
 *   <li><b>Fails open by default.</b> If Redis does not answer within {@code operationTimeout} (default 500 ms), calls
 *       go through a local limit of the same size for a second, then Redis is asked again: each instance alone still
 *       keeps to the limit, and an outage of the limit's store never becomes an outage of the dependency.
 *       {@link Builder#failClosed()} refuses them instead ({@code STORE_UNAVAILABLE}).</li>
 * </ul>
 *
 * <p>A shared limit is fixed: an adaptive template is refused. Give every instance the same limit: each sets the
 * semaphore's size when it first asks for a permit. Lease expiry is judged by Redisson with the clients' clocks; keep
 * hosts synchronised (NTP), a lease is far longer than their skew.
 */
public final class RedisConcurrencyLimit {

  private RedisConcurrencyLimit() {}

  /** A builder of the limit {@code template} shared through Redis. */
  public static Builder builder(RedissonReactiveClient redisson, ConcurrencyLimit template) {
    return new Builder(redisson, template);
  }

  /** Builds a shared {@link ConcurrencyLimit}; {@link #build()} validates and says what to change. */
  public static final class Builder extends SharedLimitBuilder<Builder> {
    private final ConcurrencyEngine template;
    private Duration lease = SharedSettings.DEFAULT_LEASE;
    private Duration pollInterval = SharedSettings.DEFAULT_POLL_INTERVAL;

    private Builder(RedissonReactiveClient redisson, ConcurrencyLimit template) {
      super(redisson, "bw:limit:");
      Objects.requireNonNull(template, "template");
      if (!(template instanceof ConcurrencyEngine engine)) {
        throw new IllegalArgumentException("Template " + template.getClass().getName() + " is not a limit built by "
            + "ConcurrencyLimit.builder(..)");
      }
      this.template = engine;
    }

    /** How long a permit lasts without renewal: how soon a dead instance's permits come back. Default 30 s. */
    public Builder lease(Duration lease) {
      this.lease = Objects.requireNonNull(lease, "lease");
      return this;
    }

    /** How often a waiting call asks Redis again when no permit of this instance came back. Default 50 ms. */
    public Builder pollInterval(Duration pollInterval) {
      this.pollInterval = Objects.requireNonNull(pollInterval, "pollInterval");
      return this;
    }

    public ConcurrencyLimit build() {
      String name = template.name();
      return ConcurrencyEngine.shared(template.settings(),
          new SharedSettings(operationTimeout, lease, pollInterval, failOpen), new RedissonPermits(redisson, key(name)));
    }
  }
}
