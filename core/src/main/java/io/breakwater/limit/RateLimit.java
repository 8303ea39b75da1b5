package io.breakwater.limit;

import io.breakwater.internal.limit.RateEngine;
import io.breakwater.internal.limit.RateSettings;
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
 * Requests and tokens per interval for one dependency (an LLM provider's key, a paid API), for
 * {@link io.breakwater.Breakwater#throttledBy}: each call takes one request and the tokens of its {@link CallWeight},
 * and the limit learns the provider's own view from its rate-limit headers.
 *
 * <pre>{@code
 * RateLimit openai = RateLimit.builder("openai")
 *     .requests(60, Duration.ofMinutes(1))
 *     .tokens(10_000, Duration.ofMinutes(1))
 *     .build();
 * llm.complete(prompt).transformDeferred(throttledBy(openai, CallWeight.tokens(estimate, Reply::totalTokens)));
 * }</pre>
 *
 * <ul>
 *   <li><b>Token buckets.</b> Each kind of permit is a bucket that holds at most its limit and refills continuously
 *       at limit per interval, as OpenAI's and Anthropic's do. A call runs when both buckets hold its weight.</li>
 *   <li><b>Learning from the provider.</b> The headers of every {@link io.breakwater.failure.HttpStatusException},
 *       and of results when the {@link CallWeight} reads them, go through the {@link ProviderRateLimits} reader
 *       ({@link ProviderRateLimits#all()} by default). A provider's {@code limit} lowers the configured one (never
 *       raises it) or sets one that was not configured; its {@code remaining} lowers what the bucket holds, counted
 *       from the moment the call was admitted (permits taken by calls admitted since are taken off); its {@code reset}
 *       paces the refill: the bucket is not full again before the reset instant. A 429 stops every call until its
 *       {@code retry-after} (1 s without one).</li>
 *   <li><b>Waiting.</b> A call that finds too few permits waits in a fair queue; when it joins, the limit computes
 *       when its turn would come, and a call that could not run before its deadline or {@code maxWait} is refused at
 *       once with a {@link LimitExceededException} whose {@link LimitExceededException#retryAfter()} says when it
 *       could. A call that waits is refused when its deadline or {@code maxWait} comes first.</li>
 *   <li><b>Fairness between tasks.</b> The queue is start-time fair queuing, one flow per agent task (each
 *       subscription of {@code withTaskBudget}; calls outside a task form one flow): the next call to run is the one
 *       whose task has had the least of the limit so far, counted in time of the scarcer bucket. A task that queues
 *       fifty calls does not delay another task's one call by fifty turns.</li>
 * </ul>
 *
 * <table>
 *   <caption>Settings</caption>
 *   <tr><th>setting</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code requests(n, interval)}</td><td>unlimited</td><td>requests per interval</td></tr>
 *   <tr><td>{@code tokens(n, interval)}</td><td>unlimited</td><td>tokens per interval</td></tr>
 *   <tr><td>{@code providerHeaders}</td><td>{@link ProviderRateLimits#all()}</td><td>what the provider's headers
 *       say; a limit learnt for a kind that was not configured refills per minute</td></tr>
 *   <tr><td>{@code maxWait}</td><td>{@value #DEFAULT_MAX_WAIT_SECONDS} s</td><td>the longest a call waits; the
 *       deadline in force bounds it further; zero refuses at once</td></tr>
 *   <tr><td>{@code maxQueue}</td><td>{@value #DEFAULT_MAX_QUEUE}</td><td>calls that may wait at once</td></tr>
 *   <tr><td>{@code maxQueuePerTask}</td><td>half of {@code maxQueue}</td><td>calls of one agent task that may wait
 *       at once, so one task cannot fill the queue; calls outside any task are bounded by {@code maxQueue}
 *       only</td></tr>
 *   <tr><td>{@code scheduler}</td><td>{@code Schedulers::parallel}</td><td>the clock and the queue's timers,
 *       resolved when used</td></tr>
 * </table>
 *
 * <p>Build one per key and share it: it holds the buckets. Thread-safe. Not for implementation: build limits with
 * {@link #builder(String)} (in memory) or with {@code RedisRateLimit} (shared by every instance).
 */
public interface RateLimit {

  /** The default {@code maxQueue}. */
  int DEFAULT_MAX_QUEUE = 1000;

  /** The default {@code maxWait}, in seconds. */
  long DEFAULT_MAX_WAIT_SECONDS = 30;

  /** A builder for the rate limit called {@code name} (a metric tag and log field, never user data). */
  static Builder builder(String name) {
    return new Builder(name);
  }

  /** The limit's name. */
  String name();

  /** The requests that could be taken now, rounded down; {@link Long#MAX_VALUE} when requests are unlimited. */
  long availableRequests();

  /** The tokens that could be taken now, rounded down; {@link Long#MAX_VALUE} when tokens are unlimited. */
  long availableTokens();

  /** Calls waiting for permits now (on this instance, for a shared limit). */
  int queued();

  /** Builds an in-memory {@link RateLimit}; {@link #build()} validates and says what to change. */
  final class Builder {
    private final String name;
    private long requests = -1;
    private @Nullable Duration requestInterval;
    private long tokens = -1;
    private @Nullable Duration tokenInterval;
    private ProviderRateLimits headers = ProviderRateLimits.all();
    private boolean headersSet;
    private Duration maxWait = Duration.ofSeconds(DEFAULT_MAX_WAIT_SECONDS);
    private int maxQueue = DEFAULT_MAX_QUEUE;
    private int maxQueuePerTask = TaskShares.DEFAULT_SHARE;
    private Supplier<Scheduler> scheduler = Schedulers::parallel;
    private MeterRegistry meterRegistry = Metrics.globalRegistry;

    private Builder(String name) {
      this.name = Objects.requireNonNull(name, "name");
    }

    /** At most {@code count} requests per {@code interval}, with bursts of up to {@code count}. */
    public Builder requests(long count, Duration interval) {
      this.requests = count;
      this.requestInterval = Objects.requireNonNull(interval, "interval");
      return this;
    }

    /** At most {@code count} tokens per {@code interval}, with bursts of up to {@code count}. */
    public Builder tokens(long count, Duration interval) {
      this.tokens = count;
      this.tokenInterval = Objects.requireNonNull(interval, "interval");
      return this;
    }

    /** How the provider's rate-limit headers are read; {@link ProviderRateLimits#none()} ignores them. */
    public Builder providerHeaders(ProviderRateLimits reader) {
      this.headers = Objects.requireNonNull(reader, "reader");
      this.headersSet = true;
      return this;
    }

    /** The longest a call waits for its permits; the deadline in force bounds it further. Zero refuses at once. */
    public Builder maxWait(Duration maxWait) {
      this.maxWait = Objects.requireNonNull(maxWait, "maxWait");
      return this;
    }

    /** How many calls may wait at once; more are refused with {@code QUEUE_FULL}. */
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

    /** The clock and the queue's timers, resolved when used. */
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

    public RateLimit build() {
      return RateEngine.local(settings());
    }

    private RateSettings settings() {
      if (requests == -1 && tokens == -1 && !headersSet) {
        throw new IllegalArgumentException("Rate limit '" + name + "' has no limit: add .requests(60, "
            + "Duration.ofMinutes(1)) or .tokens(10_000, Duration.ofMinutes(1)), or .providerHeaders(..) to learn "
            + "the limits from the provider's headers");
      }
      return new RateSettings(name, requests, requestInterval, tokens, tokenInterval, headers, maxWait, maxQueue,
          scheduler, meterRegistry, maxQueuePerTask);
    }
  }
}
