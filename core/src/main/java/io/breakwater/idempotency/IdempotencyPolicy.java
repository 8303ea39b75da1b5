package io.breakwater.idempotency;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.breakwater.failure.FailureClassifier;
import io.breakwater.internal.Durations;
import io.breakwater.internal.idempotency.BackgroundCompletions;
import io.breakwater.internal.idempotency.InMemoryIdempotencyStore;
import io.breakwater.internal.idempotency.KeyedHashes;
import io.breakwater.internal.idempotency.OwnerTokens;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * How {@code idempotentBy} keeps its promise: where claims live, how long outcomes are kept, what duplicates do while
 * the first call runs. Immutable and validated; build one per store and share it.
 *
 * <pre>{@code
 * IdempotencyPolicy policy = IdempotencyPolicy.builder(RedisIdempotencyStore.create(redisson))
 *     .keySecret(secrets.bytes("breakwater-idempotency"))  // the same on every instance; 32 bytes or more
 *     .ttl(Duration.ofHours(24))
 *     .longestRetryWindow(Duration.ofMinutes(10))   // build() refuses a TTL shorter than this
 *     .onUnrecorded(event -> alerts.warn(event.toString()))
 *     .build();
 * refund.transformDeferred(idempotentBy(key, policy, Receipt.class));
 * }</pre>
 *
 * <table>
 *   <caption>Defaults</caption>
 *   <tr><th>setting</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code ttl}</td><td>24 h</td><td>how long an outcome is kept and replayed to duplicates</td></tr>
 *   <tr><td>{@code lease}</td><td>30 s</td><td>how long a claim is held without renewal; the owner renews it every
 *       third of the lease while it runs (and while its outcome is being stored), so a claim whose owner crashed or
 *       froze frees itself after at most one lease</td></tr>
 *   <tr><td>{@code storeTimeout}</td><td>2 s</td><td>the longest any one store call may take (claim, renew,
 *       complete, release), whatever the store's own timeouts</td></tr>
 *   <tr><td>{@code keySecret}</td><td>the in-memory store's own random secret; required for any other store</td>
 *       <td>the HMAC-SHA-256 key under which store keys, fingerprints, log tags and the key sent to dependencies
       ({@link #sentKey}) are computed</td></tr>
 *   <tr><td>{@code onUnrecorded}</td><td>a warning in the log</td><td>told when an outcome could not be stored
 *       ({@link UnrecordedOutcome})</td></tr>
 *   <tr><td>{@code pollInterval}</td><td>1 s</td><td>how often a waiting duplicate looks again when the store cannot
 *       notify it</td></tr>
 *   <tr><td>{@code failFastWhenInFlight}</td><td>off</td><td>duplicates wait for the first call's outcome (within their
 *       own deadline) instead of failing with {@link IdempotencyInFlightException}</td></tr>
 *   <tr><td>{@code cacheNonRetryableFailures}</td><td>off</td><td>a non-retryable failure frees the key, like a
 *       retryable one, instead of being replayed to duplicates; on, the dependency's own refusals
 *       ({@code INVALID_ARGUMENT}, {@code CLIENT_ERROR}, {@code BUSINESS}) are replayed, while an open breaker, a
 *       spent budget, a passed deadline or an {@code Error} still free the key</td></tr>
 *   <tr><td>{@code failOpenForReads}</td><td>off</td><td>when the store is unavailable every call fails closed with
 *       {@link StoreUnavailableException}; on, a {@link SideEffect#READ_ONLY} call runs anyway</td></tr>
 *   <tr><td>{@code maxResultBytes}</td><td>1 MiB</td><td>a result whose JSON is larger, in UTF-8 bytes, is refused
 *       with {@link IdempotencyLimitException}, and that refusal is what duplicates get</td></tr>
 *   <tr><td>{@code maxBackgroundCompletions}</td><td>64</td><td>how many outcomes may be being stored after their
 *       callers got their values; beyond it, a caller gets its value once its own outcome is stored (or given
 *       up), so a sustained load cannot queue completions faster than the store takes them</td></tr>
 *   <tr><td>{@code longestRetryWindow}</td><td>none</td><td>if set, {@code build()} refuses a TTL shorter than
 *       it</td></tr>
 * </table>
 */
public final class IdempotencyPolicy {

  public static final Duration DEFAULT_TTL = Duration.ofHours(24);
  public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
  public static final Duration DEFAULT_STORE_TIMEOUT = Duration.ofSeconds(2);
  /** The longest TTL accepted: ten years. Longer durations would overflow the stores' arithmetic. */
  public static final Duration MAX_TTL = Duration.ofDays(3650);
  /** The longest kept failure message, in characters; longer ones are cut. */
  public static final int MAX_FAILURE_MESSAGE_CHARS = 1024;
  /** The shortest {@code keySecret}, in bytes. */
  public static final int MIN_KEY_SECRET_BYTES = 32;
  public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);
  public static final int DEFAULT_MAX_RESULT_BYTES = 1 << 20;
  public static final int DEFAULT_MAX_BACKGROUND_COMPLETIONS = 64;

  private final IdempotencyStore store;
  private final Duration ttl;
  private final Duration lease;
  private final Duration pollInterval;
  private final boolean failFastWhenInFlight;
  private final boolean cacheNonRetryableFailures;
  private final boolean failOpenForReads;
  private final int maxResultBytes;
  private final int maxBackgroundCompletions;
  /** {@code BackgroundCompletions.of(policy)} reads this field by name (no code here does); no method exposes it. */
  @SuppressWarnings("UnusedVariable")
  private final BackgroundCompletions backgroundCompletions;
  private final ObjectMapper objectMapper;
  private final FailureClassifier classifier;
  private final MeterRegistry meterRegistry;
  private final Supplier<Scheduler> scheduler;
  private final Duration storeTimeout;
  private final Consumer<UnrecordedOutcome> onUnrecorded;
  private final KeyedHashes hashes;
  private final Map<JavaType, ObjectReader> readers = new ConcurrentHashMap<>();
  private final Map<JavaType, ObjectWriter> writers = new ConcurrentHashMap<>();

  private IdempotencyPolicy(Builder b, KeyedHashes hashes) {
    this.store = b.store;
    this.ttl = b.ttl;
    this.lease = b.lease;
    this.pollInterval = b.pollInterval;
    this.failFastWhenInFlight = b.failFastWhenInFlight;
    this.cacheNonRetryableFailures = b.cacheNonRetryableFailures;
    this.failOpenForReads = b.failOpenForReads;
    this.maxResultBytes = b.maxResultBytes;
    this.maxBackgroundCompletions = b.maxBackgroundCompletions;
    this.backgroundCompletions = new BackgroundCompletions(b.maxBackgroundCompletions);
    this.objectMapper = b.objectMapper;
    this.classifier = b.classifier;
    this.meterRegistry = b.meterRegistry;
    this.scheduler = b.scheduler;
    this.storeTimeout = b.storeTimeout;
    this.onUnrecorded = b.onUnrecorded;
    this.hashes = hashes;
  }

  /** The defaults, with {@code store}. */
  public static IdempotencyPolicy of(IdempotencyStore store) {
    return builder(store).build();
  }

  public static Builder builder(IdempotencyStore store) {
    return new Builder(store);
  }

  public IdempotencyStore store() {
    return store;
  }

  public Duration ttl() {
    return ttl;
  }

  public Duration lease() {
    return lease;
  }

  public Duration pollInterval() {
    return pollInterval;
  }

  public boolean failFastWhenInFlight() {
    return failFastWhenInFlight;
  }

  public boolean cacheNonRetryableFailures() {
    return cacheNonRetryableFailures;
  }

  public boolean failOpenForReads() {
    return failOpenForReads;
  }

  public int maxResultBytes() {
    return maxResultBytes;
  }

  /** How many outcomes may be being stored at once after their callers got their values. */
  public int maxBackgroundCompletions() {
    return maxBackgroundCompletions;
  }


  public ObjectMapper objectMapper() {
    return objectMapper;
  }

  /** The reader of results of {@code type}, built once per type and policy (Jackson builds it under a lock). */
  public ObjectReader readerFor(JavaType type) {
    return readers.computeIfAbsent(type, objectMapper::readerFor);
  }

  /** The writer of results of {@code type}, built once per type and policy. */
  public ObjectWriter writerFor(JavaType type) {
    return writers.computeIfAbsent(type, objectMapper::writerFor);
  }

  public FailureClassifier classifier() {
    return classifier;
  }

  public MeterRegistry meterRegistry() {
    return meterRegistry;
  }

  public Supplier<Scheduler> scheduler() {
    return scheduler;
  }

  /** The longest any one store call may take. */
  public Duration storeTimeout() {
    return storeTimeout;
  }

  /** Told of every outcome that could not be stored. */
  public Consumer<UnrecordedOutcome> onUnrecorded() {
    return onUnrecorded;
  }

  /**
   * The key this policy asks its store for: {@code namespace:tool:args:<hmac>} for a derived key,
   * {@code namespace:tool:key:<hmac>} for a client's key, where {@code <hmac>} is the HMAC-SHA-256 of the key under
   * the policy's secret. Useful to find a record in Redis.
   */
  public String storeKey(IdempotencyKey key) {
    return hashes.storeKey(key);
  }

  /** The fingerprint this policy stores: the HMAC-SHA-256 of the key's payload fingerprint under its secret. */
  public String storeFingerprint(IdempotencyKey key) {
    return hashes.storeFingerprint(key);
  }

  /**
   * How messages and logs of {@code idempotentBy} name a key: {@code namespace:tool:#<8 hex digits>} of its keyed
   * hash. Stable across instances that share the secret; gives away neither the arguments nor the client key.
   */
  public String tag(IdempotencyKey key) {
    return hashes.tag(key);
  }

  /**
   * The key as dependencies are sent it ({@link io.breakwater.http.IdempotencyKeyHeader}, the Spring
   * {@code BreakwaterExchangeFilter}): the HMAC-SHA-256 of the key under the policy's secret, 64 hex digits. It names
   * neither the namespace (the tenant) nor the tool, and no argument or client key can be guessed from it without the
   * secret. Every instance with the same {@code keySecret} sends the same value for the same key, so a dependency
   * dedupes a retry whichever instance sends it; a policy on the in-memory store without {@code keySecret} uses the
   * store's random secret, so its values change with each store (each process): give {@code keySecret} whenever a
   * dependency must recognise a key from another instance or after a restart.
   */
  public String sentKey(IdempotencyKey key) {
    return hashes.sentKey(key);
  }

  /** Builds an {@link IdempotencyPolicy}; {@link #build()} validates and says what to change. */
  public static final class Builder {
    private final IdempotencyStore store;
    private Duration ttl = DEFAULT_TTL;
    private Duration lease = DEFAULT_LEASE;
    private Duration pollInterval = DEFAULT_POLL_INTERVAL;
    private boolean failFastWhenInFlight;
    private boolean cacheNonRetryableFailures;
    private boolean failOpenForReads;
    private int maxResultBytes = DEFAULT_MAX_RESULT_BYTES;
    private int maxBackgroundCompletions = DEFAULT_MAX_BACKGROUND_COMPLETIONS;
    private @Nullable Duration longestRetryWindow;
    private ObjectMapper objectMapper = JsonMapper.builder()
        .addModule(new JavaTimeModule())
        .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
        .build();
    private FailureClassifier classifier = FailureClassifier.defaults();
    private MeterRegistry meterRegistry = Metrics.globalRegistry;
    private Supplier<Scheduler> scheduler = Schedulers::parallel;
    private Duration storeTimeout = DEFAULT_STORE_TIMEOUT;
    private Consumer<UnrecordedOutcome> onUnrecorded = UnrecordedLog.INSTANCE;
    private byte @Nullable [] keySecret;

    private Builder(IdempotencyStore store) {
      this.store = Objects.requireNonNull(store, "store");
    }

    /** How long an outcome is kept and replayed to duplicates; default 24 h. */
    public Builder ttl(Duration ttl) {
      this.ttl = Objects.requireNonNull(ttl, "ttl");
      return this;
    }

    /**
     * How long a claim is held without renewal; default 30 s, at least 30 ms. The owner renews it every third of this
     * while it runs, so it bounds how long a crashed or frozen owner keeps its key, not how long a call may take.
     */
    public Builder lease(Duration lease) {
      this.lease = Objects.requireNonNull(lease, "lease");
      return this;
    }

    /** How often a waiting duplicate looks again when the store cannot notify it; default 1 s, at least 1 ms. */
    public Builder pollInterval(Duration pollInterval) {
      this.pollInterval = Objects.requireNonNull(pollInterval, "pollInterval");
      return this;
    }

    /** Duplicates fail with {@link IdempotencyInFlightException} instead of waiting for the first call. */
    public Builder failFastWhenInFlight() {
      this.failFastWhenInFlight = true;
      return this;
    }

    /** Whether a non-retryable failure is kept and replayed to duplicates (default: it frees the key). */
    public Builder cacheNonRetryableFailures(boolean cache) {
      this.cacheNonRetryableFailures = cache;
      return this;
    }

    /**
     * Whether a call declared {@link SideEffect#READ_ONLY} runs without idempotency when the store is unavailable
     * (default: no, it fails with {@link StoreUnavailableException} like every other call).
     */
    public Builder failOpenForReads(boolean failOpen) {
      this.failOpenForReads = failOpen;
      return this;
    }

    /** The largest result kept, as JSON encoded in UTF-8, in bytes; default 1 MiB. */
    public Builder maxResultBytes(int maxResultBytes) {
      this.maxResultBytes = maxResultBytes;
      return this;
    }

    /**
     * How many outcomes may be being stored after their callers got their values, for every call of this policy
     * together; default 64. A call whose result finds all of them taken stores its outcome in its own flow, and its
     * caller gets the value once that outcome is stored, fenced, or given up at the end of the lease, so a sustained
     * load cannot queue completions faster than the store takes them. 0 makes every caller wait for its outcome to
     * be stored.
     */
    public Builder maxBackgroundCompletions(int maxBackgroundCompletions) {
      this.maxBackgroundCompletions = maxBackgroundCompletions;
      return this;
    }

    /**
     * The longest time over which the call may be retried (by this process or by callers). {@code build()} refuses a
     * TTL shorter than it: a retry after the key expired would repeat the side effect.
     */
    public Builder longestRetryWindow(Duration window) {
      this.longestRetryWindow = Objects.requireNonNull(window, "window");
      return this;
    }

    /** The mapper that writes and reads results; default: Jackson with Java time support. */
    public Builder objectMapper(ObjectMapper objectMapper) {
      this.objectMapper = Objects.requireNonNull(objectMapper, "objectMapper");
      return this;
    }

    /** Decides which failures are retryable (they free the key); default {@link FailureClassifier#defaults()}. */
    public Builder classifier(FailureClassifier classifier) {
      this.classifier = Objects.requireNonNull(classifier, "classifier");
      return this;
    }

    public Builder meterRegistry(MeterRegistry meterRegistry) {
      this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
      return this;
    }

    /** Times waits when no deadline is in force; default {@code Schedulers::parallel}, resolved per call. */
    public Builder scheduler(Supplier<Scheduler> scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /** The longest any one store call may take (claim, renew, complete, release); default 2 s. */
    public Builder storeTimeout(Duration storeTimeout) {
      this.storeTimeout = Objects.requireNonNull(storeTimeout, "storeTimeout");
      return this;
    }

    /**
     * Told when an outcome could not be stored: {@code complete} failed until the lease ended, or the claim was lost
     * to another owner. Runs on the thread that found out; it must not block. Default: a warning in the log.
     */
    public Builder onUnrecorded(Consumer<UnrecordedOutcome> onUnrecorded) {
      this.onUnrecorded = Objects.requireNonNull(onUnrecorded, "onUnrecorded");
      return this;
    }

    /**
     * The per-deployment secret (32 bytes or more, the same on every instance that shares the store) under which
     * store keys, fingerprints, log tags and the key sent to dependencies ({@link IdempotencyPolicy#sentKey}) are
     * HMAC-SHA-256 hashes, so that no low-entropy argument can be guessed from them. Required for every store but the in-memory one, which uses a random secret of its own. Changing
     * it changes every key: see the migration in {@code docs/idempotency.md}. The bytes are copied.
     */
    public Builder keySecret(byte[] secret) {
      Objects.requireNonNull(secret, "secret");
      if (secret.length < MIN_KEY_SECRET_BYTES) {
        throw new IllegalArgumentException("keySecret is " + secret.length + " bytes: give at least "
            + MIN_KEY_SECRET_BYTES + " random bytes (e.g. `openssl rand 32`), kept in your secret store");
      }
      this.keySecret = secret.clone();
      return this;
    }

    public IdempotencyPolicy build() {
      OwnerTokens.seed();   // on the caller's thread: seeding reads the system's entropy source
      positive("ttl", ttl);
      positive("lease", lease);
      positive("pollInterval", pollInterval);
      positive("storeTimeout", storeTimeout);
      // shorter ones are busy loops against the store: renewals every third of the lease, polls by a duplicate
      if (lease.compareTo(Duration.ofMillis(30)) < 0) {
        throw new IllegalArgumentException("lease is " + lease + ": give 30 ms or more (a claim is renewed every "
            + "third of it), e.g. 30 s");
      }
      if (pollInterval.compareTo(Duration.ofMillis(1)) < 0) {
        throw new IllegalArgumentException("pollInterval is " + pollInterval + ": give 1 ms or more (a waiting "
            + "duplicate asks the store again after each), e.g. 1 s");
      }
      if (ttl.compareTo(MAX_TTL) > 0) {
        throw new IllegalArgumentException("ttl " + ttl + " is over the maximum of " + MAX_TTL.toDays()
            + " days: give a TTL of at most ten years");
      }
      if (maxResultBytes < 1) {
        throw new IllegalArgumentException("maxResultBytes is " + maxResultBytes + ": give a positive size");
      }
      if (maxBackgroundCompletions < 0) {
        throw new IllegalArgumentException("maxBackgroundCompletions is " + maxBackgroundCompletions + ": give 0 or "
            + "more (0: every caller waits for its outcome to be stored)");
      }
      if (ttl.compareTo(lease) < 0) {
        throw new IllegalArgumentException("ttl " + Durations.format(ttl) + " is shorter than the lease "
            + readable(lease) + ": an outcome must outlive the claim that made it; raise ttl");
      }
      if (longestRetryWindow != null && ttl.compareTo(longestRetryWindow) < 0) {
        throw new IllegalArgumentException("ttl " + Durations.format(ttl) + " is shorter than the longest retry "
            + "window " + readable(longestRetryWindow) + ": a retry after the key expired would repeat the "
            + "side effect (a refund paid twice). Raise ttl to at least " + readable(longestRetryWindow));
      }
      KeyedHashes hashes;
      if (keySecret != null) {
        hashes = new KeyedHashes(keySecret);
      } else if (store instanceof InMemoryIdempotencyStore inMemory) {
        hashes = inMemory.keyedHashes();
      } else {
        throw new IllegalArgumentException("An IdempotencyPolicy on " + store.getClass().getSimpleName() + " needs "
            + "keySecret(..): keys and fingerprints in a shared store are HMAC-SHA-256 hashes under a secret that "
            + "every instance shares. Give 32 or more random bytes from your secret store");
      }
      return new IdempotencyPolicy(this, hashes);
    }

    /** {@code 2m}, {@code 10s}; ISO-8601 for durations too long to format without overflow. */
    private static String readable(Duration value) {
      return value.compareTo(MAX_TTL) <= 0 ? Durations.format(value) : value.toString();
    }

    private static void positive(String what, Duration value) {
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException(what + " is " + value + ": give a positive duration");
      }
    }
  }
}
