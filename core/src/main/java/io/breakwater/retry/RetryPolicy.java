package io.breakwater.retry;

import io.breakwater.failure.FailureClassifier;
import io.breakwater.internal.retry.DependencyBudgets;
import io.breakwater.internal.retry.RetryMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * An immutable, validated description of how {@code retryWithBudget} retries calls to one dependency.
 *
 * <pre>{@code
 * RetryPolicy flights = RetryPolicy.builder()
 *     .name("flights")
 *     .maxRetries(3)
 *     .backoff(Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(5)))
 *     .build();
 * Mono<Offers> offers = client.search(query).transformDeferred(retryWithBudget(flights));
 * }</pre>
 *
 * <table>
 *   <caption>Defaults</caption>
 *   <tr><th>setting</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code name}</td><td>{@code "default"}</td><td>the dependency: names the metrics'
 *       {@code dependency} tag and {@link RetryExhaustedException#source()}</td></tr>
 *   <tr><td>{@code maxRetries}</td><td>3</td><td>retries after the first attempt</td></tr>
 *   <tr><td>{@code backoff}</td><td>{@code fullJitter(200 ms, 10 s)}</td><td>delay before each retry</td></tr>
 *   <tr><td>{@code timeoutBase}</td><td>1 s</td><td>the backoff's base after a {@code TIMEOUT}
 *       ({@code Duration.ZERO}: the backoff's own)</td></tr>
 *   <tr><td>{@code rateLimitedBase}</td><td>5 s</td><td>after a {@code RATE_LIMITED} failure without a hint,
 *       wait base + the backoff computed with this base (so at least 5 s); a server's {@code Retry-After} or
 *       {@code retry-after-ms} is honoured as it is, even when shorter: it knows its own window</td></tr>
 *   <tr><td>{@code retryAfterCap}</td><td>60 s</td><td>the longest {@code Retry-After}/{@code retry-after-ms}
 *       honoured (and longest rate-limited wait)</td></tr>
 *   <tr><td>{@code minAttemptTime}</td><td>100 ms</td><td>no retry starts with less time than this before the
 *       deadline</td></tr>
 *   <tr><td>{@code minAttemptShare}</td><td>0.1</td><td>nor with less than this share of the deadline's whole
 *       budget (1 s of a 10 s deadline): an attempt with less time than that rarely answers</td></tr>
 *   <tr><td>{@code budget}</td><td>the dependency's: one {@link RetryBudget#ofDefaults()} (15 % of calls, 10
 *       tokens) per {@code name}, shared by every policy of that name timed by the same scheduler, however often
 *       the policy is built</td><td>the dependency's token bucket</td></tr>
 *   <tr><td>{@code classifier}</td><td>{@link FailureClassifier#defaults()}</td><td>maps failures to kinds</td></tr>
 *   <tr><td>{@code scheduler}</td><td>{@code Schedulers::parallel}</td><td>clock and timer for backoff sleeps
 *       when no deadline is in force (with one, the deadline's scheduler), resolved at subscription</td></tr>
 *   <tr><td>{@code random}</td><td>{@code ThreadLocalRandom::current}</td><td>jitter source; seed it in
 *       tests</td></tr>
 *   <tr><td>{@code meterRegistry}</td><td>{@code Metrics.globalRegistry}</td><td>where metrics go</td></tr>
 * </table>
 *
 * <p>Immutable and thread-safe. Building one is cheap and registers nothing, so it may be built inline, per call:
 * the retry budget belongs to the dependency it names, not to the policy object. Policies named alike share one
 * budget, kept per scheduler (a test on its own {@code VirtualTimeScheduler} starts with fresh budgets); at most
 * {@value io.breakwater.internal.retry.DependencyBudgets#MAX_NAMES} names per scheduler are kept, so name
 * dependencies after services or tools, never after request data.
 */
public final class RetryPolicy {

  public static final String DEFAULT_NAME = "default";
  public static final int DEFAULT_MAX_RETRIES = 3;
  public static final Backoff DEFAULT_BACKOFF = Backoff.fullJitter(Duration.ofMillis(200), Duration.ofSeconds(10));
  public static final Duration DEFAULT_TIMEOUT_BASE = Duration.ofSeconds(1);
  public static final Duration DEFAULT_RATE_LIMITED_BASE = Duration.ofSeconds(5);
  public static final Duration DEFAULT_RETRY_AFTER_CAP = Duration.ofSeconds(60);
  public static final Duration DEFAULT_MIN_ATTEMPT_TIME = Duration.ofMillis(100);
  public static final double DEFAULT_MIN_ATTEMPT_SHARE = 0.1;

  private final String name;
  private final int maxRetries;
  private final Backoff backoff;
  private final Duration timeoutBase;
  private final Duration rateLimitedBase;
  private final Duration retryAfterCap;
  private final Duration minAttemptTime;
  private final double minAttemptShare;
  /** The budget given to the builder; {@code null}: the dependency's, by name and scheduler. */
  private final @Nullable RetryBudget budget;
  private final FailureClassifier classifier;
  private final Supplier<Scheduler> scheduler;
  private final Supplier<? extends RandomGenerator> random;
  private final MeterRegistry meterRegistry;

  private RetryPolicy(Builder b) {
    this.name = b.name;
    this.maxRetries = b.maxRetries;
    this.backoff = b.backoff;
    this.timeoutBase = b.timeoutBase;
    this.rateLimitedBase = b.rateLimitedBase;
    this.retryAfterCap = b.retryAfterCap;
    this.minAttemptTime = b.minAttemptTime;
    this.minAttemptShare = b.minAttemptShare;
    this.budget = b.budget;
    this.classifier = b.classifier;
    this.scheduler = b.scheduler;
    this.random = b.random;
    this.meterRegistry = b.meterRegistry;
    if (budget != null) {
      RetryMetrics.registerGivenBudget(name, budget, meterRegistry);
    }
  }

  private static final RetryPolicy DEFAULTS = new Builder().build();

  /** The default policy: every setting at its default. */
  public static RetryPolicy ofDefaults() {
    return DEFAULTS;
  }

  /**
   * The default policy for {@code dependency}, with {@code backoff}: what {@code retryWithBudget(dependency, backoff)}
   * runs. Cheap enough to build per call; it draws on the dependency's budget.
   */
  public static RetryPolicy of(String dependency, Backoff backoff) {
    Builder b = DEFAULTS.toBuilder();
    b.name(dependency);
    b.backoff = Objects.requireNonNull(backoff, "backoff");
    if (b.name.isBlank()) {
      throw new IllegalArgumentException("Retry policy name is blank: name it after the dependency it calls");
    }
    return new RetryPolicy(b);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder that starts from this policy's settings. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.name = name;
    b.maxRetries = maxRetries;
    b.backoff = backoff;
    b.timeoutBase = timeoutBase;
    b.rateLimitedBase = rateLimitedBase;
    b.retryAfterCap = retryAfterCap;
    b.minAttemptTime = minAttemptTime;
    b.minAttemptShare = minAttemptShare;
    b.budget = budget;
    b.classifier = classifier;
    b.scheduler = scheduler;
    b.random = random;
    b.meterRegistry = meterRegistry;
    return b;
  }

  public String name() {
    return name;
  }

  public int maxRetries() {
    return maxRetries;
  }

  public Backoff backoff() {
    return backoff;
  }

  public Duration timeoutBase() {
    return timeoutBase;
  }

  public Duration rateLimitedBase() {
    return rateLimitedBase;
  }

  public Duration retryAfterCap() {
    return retryAfterCap;
  }

  public Duration minAttemptTime() {
    return minAttemptTime;
  }

  /** No retry starts with less than this share of the deadline's whole budget left. */
  public double minAttemptShare() {
    return minAttemptShare;
  }

  /**
   * The budget given to the builder; empty when the policy draws on its dependency's budget
   * ({@link #budget(Scheduler)}).
   */
  public Optional<RetryBudget> budget() {
    return Optional.ofNullable(budget);
  }

  /**
   * The budget calls timed by {@code scheduler} draw on: the one given to the builder, else the dependency's, one per
   * {@code name} and scheduler (made on first use).
   */
  public RetryBudget budget(Scheduler scheduler) {
    RetryBudget given = budget;
    return given != null ? given : DependencyBudgets.of(scheduler, name, meterRegistry);
  }

  public FailureClassifier classifier() {
    return classifier;
  }

  /** The supplier of the scheduler; call it at subscription time, not at assembly time. */
  public Supplier<Scheduler> scheduler() {
    return scheduler;
  }

  public Supplier<? extends RandomGenerator> random() {
    return random;
  }

  public MeterRegistry meterRegistry() {
    return meterRegistry;
  }

  @Override
  public String toString() {
    return "RetryPolicy{" + name + ", maxRetries=" + maxRetries + ", backoff=" + backoff + ", budget=" + (budget != null ? budget : "the dependency's") + "}";
  }

  /** Builds a {@link RetryPolicy}; {@link #build()} validates and says what to change. */
  public static final class Builder {
    private String name = DEFAULT_NAME;
    private int maxRetries = DEFAULT_MAX_RETRIES;
    private Backoff backoff = DEFAULT_BACKOFF;
    private Duration timeoutBase = DEFAULT_TIMEOUT_BASE;
    private Duration rateLimitedBase = DEFAULT_RATE_LIMITED_BASE;
    private Duration retryAfterCap = DEFAULT_RETRY_AFTER_CAP;
    private Duration minAttemptTime = DEFAULT_MIN_ATTEMPT_TIME;
    private double minAttemptShare = DEFAULT_MIN_ATTEMPT_SHARE;
    private @Nullable RetryBudget budget;
    private FailureClassifier classifier = FailureClassifier.defaults();
    private Supplier<Scheduler> scheduler = Schedulers::parallel;
    private Supplier<? extends RandomGenerator> random = ThreadLocalRandom::current;
    private MeterRegistry meterRegistry = Metrics.globalRegistry;

    private Builder() {}

    /** The dependency's name, e.g. {@code "flights"}: a metric tag, so never user data. */
    public Builder name(String name) {
      this.name = Objects.requireNonNull(name, "name");
      return this;
    }

    /** Retries after the first attempt; 0 disables retrying. Default 3. */
    public Builder maxRetries(int maxRetries) {
      this.maxRetries = maxRetries;
      return this;
    }

    public Builder backoff(Backoff backoff) {
      this.backoff = Objects.requireNonNull(backoff, "backoff");
      return this;
    }

    /** The backoff's base after a timeout; {@code Duration.ZERO} keeps the backoff's own. Default 1 s. */
    public Builder timeoutBase(Duration base) {
      this.timeoutBase = Objects.requireNonNull(base, "timeoutBase");
      return this;
    }

    /**
     * The least wait after a rate-limited answer without {@code Retry-After}/{@code retry-after-ms}; a hint, even a
     * shorter one, is honoured as it is. Default 5 s.
     */
    public Builder rateLimitedBase(Duration base) {
      this.rateLimitedBase = Objects.requireNonNull(base, "rateLimitedBase");
      return this;
    }

    /** The longest {@code Retry-After} honoured; longer ones are shortened to it. Default 60 s. */
    public Builder retryAfterCap(Duration cap) {
      this.retryAfterCap = Objects.requireNonNull(cap, "retryAfterCap");
      return this;
    }

    /**
     * No retry starts with less than this left before the deadline (nor with less than
     * {@link #minAttemptShare(double)} of the deadline's budget): the call ends at once with
     * {@code DeadlineExceededException} instead. Default 100 ms.
     */
    public Builder minAttemptTime(Duration minAttemptTime) {
      this.minAttemptTime = Objects.requireNonNull(minAttemptTime, "minAttemptTime");
      return this;
    }

    /**
     * No retry starts with less than this share of the deadline's whole budget left, in [0, 1): with the default
     * 0.1, a 10 s task makes no attempt in its last second. 0 leaves {@link #minAttemptTime(Duration)} alone.
     */
    public Builder minAttemptShare(double share) {
      this.minAttemptShare = share;
      return this;
    }

    /**
     * The dependency's retry budget; by default the dependency's own, one {@link RetryBudget#ofDefaults()} per
     * {@link #name(String)} and scheduler, shared by every policy of that name. Give one to share it across names,
     * to size it, or to share it across instances ({@code RedisRetryBudget}).
     */
    public Builder budget(RetryBudget budget) {
      this.budget = Objects.requireNonNull(budget, "budget");
      return this;
    }

    public Builder classifier(FailureClassifier classifier) {
      this.classifier = Objects.requireNonNull(classifier, "classifier");
      return this;
    }

    /** Clock and timer when no deadline is in force; resolved at subscription. Default {@code Schedulers::parallel}. */
    public Builder scheduler(Supplier<Scheduler> scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /** The jitter's random source, asked once per call that fails. Default {@code ThreadLocalRandom::current}. */
    public Builder random(Supplier<? extends RandomGenerator> random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    public Builder meterRegistry(MeterRegistry meterRegistry) {
      this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
      return this;
    }

    public RetryPolicy build() {
      if (name.isBlank()) {
        throw new IllegalArgumentException("Retry policy name is blank: name it after the dependency it calls");
      }
      if (maxRetries < 0) {
        throw new IllegalArgumentException("maxRetries is " + maxRetries
            + ": give 0 (no retries) or more (e.g. 3)");
      }
      checkNotNegative("timeoutBase", timeoutBase);
      checkNotNegative("rateLimitedBase", rateLimitedBase);
      checkNotNegative("minAttemptTime", minAttemptTime);
      if (!(minAttemptShare >= 0 && minAttemptShare < 1)) {
        throw new IllegalArgumentException("minAttemptShare is " + minAttemptShare
            + ": give a share of the deadline in [0, 1), e.g. 0.1, or 0 to rely on minAttemptTime alone");
      }
      if (retryAfterCap.isNegative() || retryAfterCap.isZero()) {
        throw new IllegalArgumentException("retryAfterCap is " + retryAfterCap + ": give a positive duration");
      }
      if (rateLimitedBase.compareTo(retryAfterCap) > 0) {
        throw new IllegalArgumentException("rateLimitedBase " + rateLimitedBase + " exceeds retryAfterCap "
            + retryAfterCap + ": raise the cap or lower the base");
      }
      return new RetryPolicy(this);
    }

    private static void checkNotNegative(String what, Duration value) {
      if (value.isNegative()) {
        throw new IllegalArgumentException(what + " is " + value + ": give zero or a positive duration");
      }
    }
  }
}
