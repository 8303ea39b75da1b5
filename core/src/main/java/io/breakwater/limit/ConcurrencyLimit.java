package io.breakwater.limit;

import io.breakwater.failure.FailureClassifier;
import io.breakwater.internal.limit.AdaptiveSettings;
import io.breakwater.internal.limit.ConcurrencyEngine;
import io.breakwater.internal.limit.ConcurrencySettings;
import io.breakwater.internal.limit.TaskShares;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * At most <i>n</i> calls in flight to one dependency, for {@link io.breakwater.Breakwater#limitedBy}. A {@code Mono}
 * holds its permit until it ends or is cancelled; a {@code Flux} until it terminates or is cancelled. A call that
 * finds no permit waits in a FIFO queue, bounded by the deadline in force, {@code maxWait} and {@code maxQueue}, or is
 * refused with a {@link LimitExceededException}.
 *
 * <pre>{@code
 * ConcurrencyLimit search = ConcurrencyLimit.builder("search").fixed(10).maxWait(Duration.ofSeconds(2)).build();
 * client.search(query).transformDeferred(limitedBy(search));
 * }</pre>
 *
 * <table>
 *   <caption>Settings</caption>
 *   <tr><th>setting</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code fixed(n)} or {@code adaptive(..)}</td><td>required in the builder</td><td>a fixed limit, or one
 *       learnt from latency and drops (Vegas-style, see {@link Builder#adaptive(int, int, int)})</td></tr>
 *   <tr><td>{@code maxWait}</td><td>{@value #DEFAULT_MAX_WAIT_SECONDS} s</td><td>the longest a call waits for a
 *       permit; the deadline in force bounds it further; zero refuses at once</td></tr>
 *   <tr><td>{@code maxQueue}</td><td>{@value #DEFAULT_MAX_QUEUE}</td><td>calls that may wait at once; zero refuses
 *       at once</td></tr>
 *   <tr><td>{@code maxQueuePerTask}</td><td>half of {@code maxQueue}</td><td>calls of one agent task that may wait
 *       at once, so one task cannot fill the queue; calls outside any task are bounded by {@code maxQueue}
 *       only</td></tr>
 *   <tr><td>{@code classifier}</td><td>{@link FailureClassifier#defaults()}</td><td>for an adaptive limit: which
 *       failures are drops ({@code TIMEOUT}, {@code SERVER_ERROR}, {@code CONNECTION}, {@code RATE_LIMITED})</td></tr>
 *   <tr><td>{@code scheduler}</td><td>{@code Schedulers::parallel}</td><td>the waits' timers and the adaptive
 *       limit's clock, resolved when used</td></tr>
 * </table>
 *
 * <p>Build one per dependency and share it: it holds the permits. Thread-safe. Not for implementation: build limits
 * with {@link #builder(String)} (in memory) or with {@code RedisConcurrencyLimit} (shared by every instance).
 */
public interface ConcurrencyLimit {

  /** The default {@code maxQueue}. */
  int DEFAULT_MAX_QUEUE = 1000;

  /** The default {@code maxWait}, in seconds. */
  long DEFAULT_MAX_WAIT_SECONDS = 10;

  /** Where {@link Builder#adaptive()} starts. */
  int DEFAULT_ADAPTIVE_INITIAL = 20;

  /** The least {@link Builder#adaptive()} goes down to. */
  int DEFAULT_ADAPTIVE_MIN = 1;

  /** The most {@link Builder#adaptive()} goes up to. */
  int DEFAULT_ADAPTIVE_MAX = 200;

  /** At most {@code limit} calls in flight, other settings at their defaults; named {@code "concurrency"}. */
  static ConcurrencyLimit fixed(int limit) {
    return builder("concurrency").fixed(limit).build();
  }

  /**
   * A limit learnt from latency and drops, starting at 20 and kept between 1 and 200, other settings at their
   * defaults; named {@code "concurrency"}.
   */
  static ConcurrencyLimit adaptive() {
    return builder("concurrency").adaptive().build();
  }

  /** A builder for the limit of the dependency called {@code name} (a metric tag and log field, never user data). */
  static Builder builder(String name) {
    return new Builder(name);
  }

  /** The limit's name. */
  String name();

  /** The current limit: fixed, or what an adaptive limit has learnt so far. */
  int limit();

  /** Calls holding a permit now (on this instance, for a shared limit). */
  int inFlight();

  /** Calls waiting for a permit now (on this instance, for a shared limit). */
  int queued();

  /** Builds an in-memory {@link ConcurrencyLimit}; {@link #build()} validates and says what to change. */
  final class Builder {
    private final String name;
    private int fixed = -1;
    private @Nullable AdaptiveSettings adaptive;
    private Duration maxWait = Duration.ofSeconds(DEFAULT_MAX_WAIT_SECONDS);
    private int maxQueue = DEFAULT_MAX_QUEUE;
    private int maxQueuePerTask = TaskShares.DEFAULT_SHARE;
    private FailureClassifier classifier = FailureClassifier.defaults();
    private Supplier<Scheduler> scheduler = Schedulers::parallel;
    private MeterRegistry meterRegistry = Metrics.globalRegistry;

    private Builder(String name) {
      this.name = Objects.requireNonNull(name, "name");
    }

    /** At most {@code limit} calls in flight. */
    public Builder fixed(int limit) {
      this.fixed = limit;
      this.adaptive = null;
      return this;
    }

    /** An adaptive limit starting at 20, kept between 1 and 200. */
    public Builder adaptive() {
      return adaptive(DEFAULT_ADAPTIVE_INITIAL, DEFAULT_ADAPTIVE_MIN, DEFAULT_ADAPTIVE_MAX);
    }

    /**
     * A limit learnt from latency and drops, starting at {@code initial} and kept within [{@code min}, {@code max}].
     *
     * <p>It works as TCP Vegas and Netflix's {@code VegasLimit}: over each window of about {@code limit} calls it
     * estimates how many calls queue at the dependency, {@code limit × (1 − rttNoLoad / rtt)}, and raises the limit
     * while fewer than 5 % of it queue, lowers it while more than 15 % do, and cuts it by 10 % after a window with a
     * drop (a timeout, 5xx, connection failure or 429). {@code rttNoLoad} is the lowest latency seen; as in Envoy's
     * adaptive concurrency filter it is measured again every minute with the limit pinned to 3 for 20 calls, so that
     * a dependency that got slower for good is not read as a queue forever.
     */
    public Builder adaptive(int initial, int min, int max) {
      this.adaptive = new AdaptiveSettings(initial, min, max);
      this.fixed = -1;
      return this;
    }

    /** The longest a call waits for a permit; the deadline in force bounds it further. Zero refuses at once. */
    public Builder maxWait(Duration maxWait) {
      this.maxWait = Objects.requireNonNull(maxWait, "maxWait");
      return this;
    }

    /** How many calls may wait at once; more are refused with {@code QUEUE_FULL}. Zero refuses at once. */
    public Builder maxQueue(int maxQueue) {
      this.maxQueue = maxQueue;
      return this;
    }

    /**
     * How many calls of one agent task may wait at once (1 to {@code maxQueue}; default half of {@code maxQueue}); a
     * task's call past its share is refused with {@code QUEUE_FULL} while other tasks' calls still queue.
     */
    public Builder maxQueuePerTask(int maxQueuePerTask) {
      this.maxQueuePerTask = maxQueuePerTask;
      return this;
    }

    /** For an adaptive limit: which failures are drops that lower it. */
    public Builder classifier(FailureClassifier classifier) {
      this.classifier = Objects.requireNonNull(classifier, "classifier");
      return this;
    }

    /** The scheduler of the waits' timers and the adaptive limit's clock, resolved when used. */
    public Builder scheduler(Supplier<Scheduler> scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * Where the limit's meters go (see {@code docs/metrics.md}: permits, queue, waits, refusals by reason), registered
     * once when the limit is built. Default: {@code Metrics.globalRegistry}.
     */
    public Builder meterRegistry(MeterRegistry meterRegistry) {
      this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
      return this;
    }

    public ConcurrencyLimit build() {
      if (fixed == -1 && adaptive == null) {
        throw new IllegalArgumentException("Concurrency limit '" + name + "' has no limit: add .fixed(10) or "
            + ".adaptive()");
      }
      return ConcurrencyEngine.local(new ConcurrencySettings(name, fixed, adaptive, maxWait, maxQueue, classifier,
          scheduler, meterRegistry, maxQueuePerTask));
    }
  }
}
