package io.breakwater.agent;

import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.hedge.HedgePolicy;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.limit.CallWeight;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import io.breakwater.retry.RetryPolicy;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.observation.ObservationRegistry;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.ContextView;

/**
 * What Breakwater needs to know about one tool an agent calls: its name and family, what it does to the world, how
 * long an attempt may take, how it is retried, guarded and deduplicated, when it is written off for a task, and
 * what may be logged of its arguments. Turn it into a callable {@link Tool} with {@link Tool#of}.
 *
 * <pre>{@code
 * ToolDescriptor search = ToolDescriptor.builder("flights.search")
 *     .sideEffect(SideEffect.READ_ONLY)
 *     .timeouts(CallTimeouts.adaptive().percentile(99).build())
 *     .retry(RetryPolicy.builder().name("flights").maxRetries(2).build())
 *     .breakers(breakers)
 *     .alternates("flights.searchCached")
 *     .build();
 * }</pre>
 *
 * <table>
 *   <caption>Settings</caption>
 *   <tr><th>setting</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code family}</td><td>the name up to the first {@code '.'} (none without one)</td><td>a tag of
 *       metrics and events (breaker families come from the registry)</td></tr>
 *   <tr><td>{@code sideEffect}</td><td>required</td><td>a {@code NON_IDEMPOTENT_WRITE} is retried only with
 *       {@code idempotency}, and then only after failures that prove it was not processed; it is never hedged. A
 *       {@code DEDUPLICATED_WRITE} needs {@code idempotency} (see {@link SideEffect})</td></tr>
 *   <tr><td>{@code timeouts}</td><td>{@link CallTimeouts#adaptiveDefaults()}</td><td>per-attempt timeout</td></tr>
 *   <tr><td>{@code retry}</td><td>{@code RetryPolicy} named after the tool, with this descriptor's meter
 *       registry and scheduler, other settings default</td><td>how
 *       attempts are retried</td></tr>
 *   <tr><td>{@code breakers}</td><td>none</td><td>the registry whose tool and family breakers guard every
 *       attempt</td></tr>
 *   <tr><td>{@code hedge}</td><td>none</td><td>a backup attempt when an attempt is slow ({@code hedgedBy}, between
 *       the retry and the breakers)</td></tr>
 *   <tr><td>{@code idempotency}</td><td>none</td><td>at most once per key; the key is the tool's name and its
 *       arguments without {@code transientFields} (see {@link Tool#withIdempotencyKey}), in the namespace that
 *       {@code idempotencyNamespace} reads from the Reactor Context (or, for a {@code singleTenant()} tool, the
 *       default namespace): one of the two is required with {@code idempotency}</td></tr>
 *   <tr><td>{@code concurrencyLimit}</td><td>none</td><td>every attempt holds a permit of this
 *       {@link ConcurrencyLimit} ({@code limitedBy}) while it runs; a refusal is {@code LIMIT_EXCEEDED}, not retried
 *       and not counted against the tool</td></tr>
 *   <tr><td>{@code rateLimit}</td><td>none</td><td>every attempt takes one request of this {@link RateLimit}
 *       ({@code throttledBy}) and the tokens of its {@link CallWeight}; the weight's actual usage of a successful
 *       attempt is also spent from the task's token budget, so both count the same figures</td></tr>
 *   <tr><td>{@code unavailableAfter}</td><td>timeout 3, connection 3, server_error 3, rate_limited 2,
 *       circuit_open 2; invalid_argument 1, client_error 2</td><td>failed calls of a kind after which the tool is
 *       written off for the rest of the task; for invalid_argument and client_error, failed calls with the same
 *       arguments after which those arguments are refused without a call (the tool stays available)</td></tr>
 *   <tr><td>{@code alternates}</td><td>none</td><td>tools the model may use instead, named in failure
 *       feedback</td></tr>
 *   <tr><td>{@code classifier}</td><td>the retry policy's</td><td>failure kinds for counts, fallbacks and
 *       feedback</td></tr>
 *   <tr><td>{@code redact}</td><td>every name that, in lower case without {@code _ - .}, contains token, secret,
 *       password, passwd, passphrase, apikey, auth, credential, privatekey, session, cookie or cardnumber, or is
 *       ssn</td><td>more fields masked in events, fingerprints and feedback (each matched as a whole name, on top of
 *       the defaults)</td></tr>
 *   <tr><td>{@code logArgs}</td><td>none</td><td>top-level argument fields written in call events (masked if
 *       sensitive); otherwise only a fingerprint</td></tr>
 *   <tr><td>{@code meterRegistry}</td><td>{@code Metrics.globalRegistry}</td><td>tool meters</td></tr>
 *   <tr><td>{@code observationRegistry}</td><td>none</td><td>one Observation per call when set</td></tr>
 *   <tr><td>{@code eventLog}</td><td>SLF4J logger {@code breakwater.tool.calls} at INFO</td><td>receives one JSON
 *       event per call</td></tr>
 *   <tr><td>{@code scheduler}</td><td>{@code Schedulers::parallel}</td><td>clock when no deadline is in force,
 *       resolved at subscription; the stale-value cache's ticker</td></tr>
 * </table>
 *
 * <p>Immutable and thread-safe: build one per tool and share it.
 */
public final class ToolDescriptor {

  private final String name;
  @Nullable
  private final String family;
  private final SideEffect sideEffect;
  private final CallTimeouts timeouts;
  private final RetryPolicy retry;
  @Nullable
  private final CircuitBreakerRegistry breakers;
  @Nullable
  private final HedgePolicy hedge;
  @Nullable
  private final IdempotencyPolicy idempotency;
  @Nullable
  private final Function<ContextView, String> idempotencyNamespace;
  private final boolean singleTenant;
  private final List<String> transientFields;
  private final Map<FailureKind, Integer> unavailableAfter;
  private final List<String> alternates;
  private final FailureClassifier classifier;
  private final List<String> redact;
  private final List<String> logArgs;
  private final MeterRegistry meterRegistry;
  @Nullable
  private final ObservationRegistry observationRegistry;
  @Nullable
  private final Consumer<String> eventLog;
  private final Supplier<Scheduler> scheduler;
  @Nullable
  private final ConcurrencyLimit concurrencyLimit;
  @Nullable
  private final RateLimit rateLimit;
  @Nullable
  private final CallWeight<?> rateWeight;

  private ToolDescriptor(Builder b) {
    this.name = b.name;
    this.family = b.familySet ? b.family : CircuitBreakerRegistry.prefixFamily(b.name);
    this.sideEffect = Objects.requireNonNull(b.sideEffect, "sideEffect");
    this.timeouts = b.timeouts;
    this.retry = b.retry != null ? b.retry
        : RetryPolicy.builder().name(b.name).meterRegistry(b.meterRegistry).scheduler(b.scheduler).build();
    this.breakers = b.breakers;
    this.hedge = b.hedge;
    this.idempotency = b.idempotency;
    this.idempotencyNamespace = b.idempotencyNamespace;
    this.singleTenant = b.singleTenant;
    this.transientFields = List.copyOf(b.transientFields);
    this.unavailableAfter = Collections.unmodifiableMap(new EnumMap<>(b.unavailableAfter));
    this.alternates = List.copyOf(b.alternates);
    this.classifier = b.classifier != null ? b.classifier : this.retry.classifier();
    this.redact = List.copyOf(b.redact);
    this.logArgs = List.copyOf(b.logArgs);
    this.meterRegistry = b.meterRegistry;
    this.observationRegistry = b.observationRegistry;
    this.eventLog = b.eventLog;
    this.scheduler = b.scheduler;
    this.concurrencyLimit = b.concurrencyLimit;
    this.rateLimit = b.rateLimit;
    this.rateWeight = b.rateWeight;
  }

  /** A builder for the tool called {@code name}, e.g. {@code "flights.search"}: a metric tag, never user data. */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  public String name() {
    return name;
  }

  /** The family, or {@code null}. */
  @Nullable
  public String family() {
    return family;
  }

  public SideEffect sideEffect() {
    return sideEffect;
  }

  public CallTimeouts timeouts() {
    return timeouts;
  }

  public RetryPolicy retry() {
    return retry;
  }

  @Nullable
  public CircuitBreakerRegistry breakers() {
    return breakers;
  }

  /** The hedge policy, or {@code null}: no backup attempts. */
  @Nullable
  public HedgePolicy hedge() {
    return hedge;
  }

  @Nullable
  public IdempotencyPolicy idempotency() {
    return idempotency;
  }

  /**
   * Where the namespace of this tool's idempotency keys comes from (the tenant, read from the call's Reactor
   * Context), or {@code null} for a {@link #singleTenant()} tool or one without idempotency.
   */
  @Nullable
  public Function<ContextView, String> idempotencyNamespace() {
    return idempotencyNamespace;
  }

  /** Whether the tool was declared to serve one tenant only: its keys are in the default namespace. */
  public boolean singleTenant() {
    return singleTenant;
  }

  public List<String> transientFields() {
    return transientFields;
  }

  /** Failed calls of each kind after which the tool is written off for the task; kinds absent never do. */
  public Map<FailureKind, Integer> unavailableAfter() {
    return unavailableAfter;
  }

  public List<String> alternates() {
    return alternates;
  }

  public FailureClassifier classifier() {
    return classifier;
  }

  /** Extra fields to redact, on top of the default list. */
  public List<String> redact() {
    return redact;
  }

  public List<String> logArgs() {
    return logArgs;
  }

  public MeterRegistry meterRegistry() {
    return meterRegistry;
  }

  @Nullable
  public ObservationRegistry observationRegistry() {
    return observationRegistry;
  }

  /** Where call events go; {@code null} means the SLF4J logger {@code breakwater.tool.calls}. */
  @Nullable
  public Consumer<String> eventLog() {
    return eventLog;
  }

  /** The limit of this tool's attempts in flight, or {@code null}. */
  @Nullable
  public ConcurrencyLimit concurrencyLimit() {
    return concurrencyLimit;
  }

  /** The rate limit every attempt of this tool takes from, or {@code null}. */
  @Nullable
  public RateLimit rateLimit() {
    return rateLimit;
  }

  /** What one attempt weighs against {@link #rateLimit()}, or {@code null} with no rate limit. */
  @Nullable
  public CallWeight<?> rateWeight() {
    return rateWeight;
  }

  public Supplier<Scheduler> scheduler() {
    return scheduler;
  }

  @Override
  public String toString() {
    return "ToolDescriptor{" + name + ", " + sideEffect + ", " + timeouts + ", " + retry + "}";
  }

  /** Builds a {@link ToolDescriptor}; {@link #build()} validates and says what to change. */
  public static final class Builder {
    private final String name;
    private @Nullable String family;
    private boolean familySet;
    private @Nullable SideEffect sideEffect;
    private CallTimeouts timeouts = CallTimeouts.adaptiveDefaults();
    private @Nullable RetryPolicy retry;
    private @Nullable CircuitBreakerRegistry breakers;
    private @Nullable HedgePolicy hedge;
    private @Nullable IdempotencyPolicy idempotency;
    private @Nullable Function<ContextView, String> idempotencyNamespace;
    private boolean singleTenant;
    private final List<String> transientFields = new ArrayList<>();
    private final EnumMap<FailureKind, Integer> unavailableAfter = new EnumMap<>(FailureKind.class);
    private final List<String> alternates = new ArrayList<>();
    private @Nullable FailureClassifier classifier;
    private final List<String> redact = new ArrayList<>();
    private final List<String> logArgs = new ArrayList<>();
    private MeterRegistry meterRegistry = Metrics.globalRegistry;
    private @Nullable ObservationRegistry observationRegistry;
    private @Nullable Consumer<String> eventLog;
    private Supplier<Scheduler> scheduler = Schedulers::parallel;
    private @Nullable ConcurrencyLimit concurrencyLimit;
    private @Nullable RateLimit rateLimit;
    private @Nullable CallWeight<?> rateWeight;

    private Builder(String name) {
      this.name = Objects.requireNonNull(name, "name");
      unavailableAfter.put(FailureKind.TIMEOUT, 3);
      unavailableAfter.put(FailureKind.CONNECTION, 3);
      unavailableAfter.put(FailureKind.SERVER_ERROR, 3);
      unavailableAfter.put(FailureKind.RATE_LIMITED, 2);
      unavailableAfter.put(FailureKind.CIRCUIT_OPEN, 2);
      unavailableAfter.put(FailureKind.INVALID_ARGUMENT, 1);
      unavailableAfter.put(FailureKind.CLIENT_ERROR, 2);
    }

    /** The tool's family; {@code null} for none. Default: the name up to its first {@code '.'}. */
    public Builder family(@Nullable String family) {
      this.family = family;
      this.familySet = true;
      return this;
    }

    /** What the tool does to the world. Required. */
    public Builder sideEffect(SideEffect sideEffect) {
      this.sideEffect = Objects.requireNonNull(sideEffect, "sideEffect");
      return this;
    }

    public Builder timeouts(CallTimeouts timeouts) {
      this.timeouts = Objects.requireNonNull(timeouts, "timeouts");
      return this;
    }

    public Builder retry(RetryPolicy retry) {
      this.retry = Objects.requireNonNull(retry, "retry");
      return this;
    }

    /** Guard every attempt with the tool's and its family's breakers in {@code breakers}. */
    public Builder breakers(CircuitBreakerRegistry breakers) {
      this.breakers = Objects.requireNonNull(breakers, "breakers");
      return this;
    }

    /**
     * Send a backup attempt when an attempt is slower than {@code policy} allows (see
     * {@link io.breakwater.Breakwater#hedgedBy(HedgePolicy)}): each attempt, hedges included, passes the breakers and
     * gets its own per-attempt timeout, and a retry comes only after every attempt of a try failed.
     */
    public Builder hedge(HedgePolicy policy) {
      this.hedge = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /** Make each call happen at most once per key, with outcomes kept under {@code policy}. */
    public Builder idempotency(IdempotencyPolicy policy) {
      this.idempotency = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * The namespace of the tool's idempotency keys, read from each call's Reactor Context: the tenant, so that two
     * tenants calling with the same arguments never share a result. A call whose Context gives no namespace
     * ({@code null}, or the function throws) fails with {@link ToolMisconfiguredException} without running.
     *
     * <pre>{@code
     * .idempotency(IdempotencyPolicy.of(store))
     * .idempotencyNamespace(ctx -> ctx.get(TENANT))    // TENANT: the key your web layer puts the tenant id under
     * }</pre>
     */
    public Builder idempotencyNamespace(Function<? super ContextView, String> namespace) {
      Objects.requireNonNull(namespace, "namespace");
      this.idempotencyNamespace = namespace::apply;
      return this;
    }

    /**
     * Declares that one tenant only ever calls this tool, so its idempotency keys may all live in the default
     * namespace. Without this (or {@link #idempotencyNamespace}), {@link #build()} refuses a tool with idempotency.
     */
    public Builder singleTenant() {
      this.singleTenant = true;
      return this;
    }

    /** Argument fields left out of the idempotency key: request ids, timestamps, trace ids. */
    public Builder transientFields(String... fields) {
      transientFields.addAll(List.of(fields));
      return this;
    }

    /**
     * Write the tool off for the task after {@code failedCalls} failed calls of {@code kind}; 0 never does. For
     * {@link FailureKind#INVALID_ARGUMENT} and {@link FailureKind#CLIENT_ERROR}, refusals of the caller's own
     * arguments, the tool is never written off: after {@code failedCalls} failed calls with the same arguments, those
     * arguments are refused without a call ({@link ToolArgumentsRefusedException}), and other arguments still reach
     * the tool.
     */
    public Builder unavailableAfter(FailureKind kind, int failedCalls) {
      Objects.requireNonNull(kind, "kind");
      if (failedCalls < 0) {
        throw new IllegalArgumentException("unavailableAfter(" + kind + ", " + failedCalls + "): give 0 (never) "
            + "or more calls");
      }
      if (failedCalls == 0) {
        unavailableAfter.remove(kind);
      } else {
        unavailableAfter.put(kind, failedCalls);
      }
      return this;
    }

    /** Tools the model may call instead, named in failure feedback. */
    public Builder alternates(String... toolNames) {
      alternates.addAll(List.of(toolNames));
      return this;
    }

    public Builder classifier(FailureClassifier classifier) {
      this.classifier = Objects.requireNonNull(classifier, "classifier");
      return this;
    }

    /** More fields to mask, on top of the default list. */
    public Builder redact(String... fields) {
      redact.addAll(List.of(fields));
      return this;
    }

    /** Top-level argument fields to write in call events, masked when sensitive. */
    public Builder logArgs(String... fields) {
      logArgs.addAll(List.of(fields));
      return this;
    }

    public Builder meterRegistry(MeterRegistry meterRegistry) {
      this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
      return this;
    }

    public Builder observationRegistry(ObservationRegistry observationRegistry) {
      this.observationRegistry = Objects.requireNonNull(observationRegistry, "observationRegistry");
      return this;
    }

    /** Send each call's JSON event here instead of the SLF4J logger {@code breakwater.tool.calls}. */
    public Builder eventLog(Consumer<String> eventLog) {
      this.eventLog = Objects.requireNonNull(eventLog, "eventLog");
      return this;
    }

    /** At most the limit's permits of attempts in flight (shared with every other user of {@code limit}). */
    public Builder concurrencyLimit(ConcurrencyLimit limit) {
      this.concurrencyLimit = Objects.requireNonNull(limit, "concurrencyLimit");
      return this;
    }

    /** Every attempt takes one request of {@code limit}. */
    public Builder rateLimit(RateLimit limit) {
      return rateLimit(limit, CallWeight.oneRequest());
    }

    /**
     * Every attempt takes one request and {@code weight}'s tokens of {@code limit}, corrected by the actual usage it
     * reads from the result; that usage is also spent from the task's token budget ({@link TaskBudget#tokens()}).
     * {@code weight}'s type is the tool's result type.
     */
    public Builder rateLimit(RateLimit limit, CallWeight<?> weight) {
      this.rateLimit = Objects.requireNonNull(limit, "rateLimit");
      this.rateWeight = Objects.requireNonNull(weight, "weight");
      return this;
    }

    public Builder scheduler(Supplier<Scheduler> scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    public ToolDescriptor build() {
      if (name.isBlank()) {
        throw new IllegalArgumentException("Tool name is blank: name it as the model knows it, e.g. "
            + "\"flights.search\"");
      }
      if (sideEffect == null) {
        throw new IllegalArgumentException("Tool '" + name + "' has no side effect declared: add "
            + ".sideEffect(SideEffect.READ_ONLY), IDEMPOTENT_WRITE, NON_IDEMPOTENT_WRITE or DEDUPLICATED_WRITE");
      }
      if (sideEffect == SideEffect.NON_IDEMPOTENT_WRITE && hedge != null) {
        throw new IllegalArgumentException("Tool '" + name + "' is a NON_IDEMPOTENT_WRITE with .hedge(..): a backup "
            + "attempt would be sent while the first may be processed, so it could happen twice, idempotency or not. "
            + "Drop .hedge(..), or, if the dependency deduplicates on the idempotency key sent with every attempt, "
            + "declare .sideEffect(SideEffect.DEDUPLICATED_WRITE) with .idempotency(..)");
      }
      if (sideEffect == SideEffect.DEDUPLICATED_WRITE && idempotency == null) {
        throw new IllegalArgumentException("Tool '" + name + "' is a DEDUPLICATED_WRITE without idempotency, so no "
            + "key is sent for the dependency to deduplicate on: add .idempotency(IdempotencyPolicy.of(store))");
      }
      if (sideEffect == SideEffect.NON_IDEMPOTENT_WRITE && idempotency == null
          && (retry == null || retry.maxRetries() > 0)) {
        throw new IllegalArgumentException("Tool '" + name + "' is a NON_IDEMPOTENT_WRITE retried without "
            + "idempotency, so a retry could do it twice: add .idempotency(IdempotencyPolicy.of(store)) or "
            + ".retry(RetryPolicy.builder().maxRetries(0).build())");
      }
      if (idempotency != null && idempotencyNamespace == null && !singleTenant) {
        throw new IllegalArgumentException("Tool '" + name + "' has idempotency but no namespace for its keys, so two "
            + "tenants calling it with the same arguments would share one result: add .idempotencyNamespace(ctx -> "
            + "ctx.get(TENANT)) to read the tenant from the Reactor Context, or .singleTenant() if only one tenant "
            + "ever calls it");
      }
      if (idempotencyNamespace != null && singleTenant) {
        throw new IllegalArgumentException("Tool '" + name + "' is both singleTenant() and given an "
            + "idempotencyNamespace(..): keep one");
      }
      if ((idempotencyNamespace != null || singleTenant) && idempotency == null) {
        throw new IllegalArgumentException("Tool '" + name + "' has a namespace setting but no idempotency: add "
            + ".idempotency(IdempotencyPolicy.of(store)) or drop idempotencyNamespace/singleTenant");
      }
      if (!transientFields.isEmpty() && idempotency == null) {
        throw new IllegalArgumentException("Tool '" + name + "' has transientFields but no idempotency: add "
            + ".idempotency(IdempotencyPolicy.of(store)) or drop transientFields");
      }
      if (alternates.contains(name)) {
        throw new IllegalArgumentException("Tool '" + name + "' names itself as an alternate: remove it");
      }
      return new ToolDescriptor(this);
    }
  }
}
