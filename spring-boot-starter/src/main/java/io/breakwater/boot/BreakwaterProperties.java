package io.breakwater.boot;

import io.breakwater.failure.FailureKind;
import io.breakwater.idempotency.SideEffect;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Everything under {@code breakwater.*} in {@code application.yml}. A setting left out keeps the core builder's
 * default (shown in {@code docs/spring-boot.md}); per-instance settings override {@code defaults} one by one. Names
 * with dots ({@code flights.search}) must be written in brackets in YAML ({@code "[flights.search]":}), as every
 * Spring map key with a dot: unknown properties under {@code breakwater} fail start-up, so a forgotten bracket says so.
 *
 * <pre>{@code
 * breakwater:
 *   breakers:
 *     defaults: { failure-rate-threshold: 0.5, open-duration: 30s }
 *   retry:
 *     policies:
 *       flights: { max-retries: 2, backoff: { type: full-jitter, base: 200ms, cap: 5s } }
 *   tools:
 *     "[flights.search]": { side-effect: read-only, retry: flights }
 * }</pre>
 *
 * <p>Values are validated at start-up by the core builders; an error names the property and what to change.
 *
 * @param deadline inbound deadline header and the per-call and idle ratios of deadlines
 * @param breakers circuit breakers: defaults, per tool and per family
 * @param retry retry policies and budgets, by dependency name
 * @param idempotency the idempotency store and policy
 * @param tools tool descriptors, by tool name
 * @param health the Actuator health contributor
 * @param webclient Breakwater's exchange filter on every Boot-built {@code WebClient}
 * @param limits concurrency and rate limits, by name
 * @param springAi the advisor of Boot-built Spring AI {@code ChatClient}s and the wrapping of tool callback beans
 *     (with {@code breakwater-spring-ai} on the class path)
 */
@ConfigurationProperties(prefix = "breakwater", ignoreUnknownFields = false)
public record BreakwaterProperties(
    @DefaultValue Deadline deadline,
    @DefaultValue Breakers breakers,
    @DefaultValue Retry retry,
    @DefaultValue Idempotency idempotency,
    Map<String, Tool> tools,
    @DefaultValue Health health,
    @DefaultValue WebClientFilter webclient,
    @DefaultValue Limits limits,
    @DefaultValue SpringAi springAi) {

  public BreakwaterProperties {
    tools = ordered(tools);
  }

  static <V> Map<String, V> ordered(Map<String, V> map) {
    return map == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(map));
  }

  /**
   * Deadlines: how per-call and idle budgets derive from the time left, and the inbound deadline header.
   *
   * @param perCallFraction share of the time left that one call may take (default 0.6)
   * @param perCallCap the most one call may take, however much time is left (default 12s)
   * @param idleFraction share of the per-call budget a stream may go without progress (default 0.3)
   * @param idleCap the longest a stream may go without progress (default 3s)
   * @param header the header that carries the deadline, in and out
   * @param inbound the server side: the WebFilter that reads the header
   */
  public record Deadline(Double perCallFraction, Duration perCallCap, Double idleFraction, Duration idleCap,
      @DefaultValue("Breakwater-Timeout") String header, @DefaultValue Inbound inbound) {}

  /**
   * The WebFilter that runs each request under the deadline its header carries.
   *
   * @param enabled whether the filter is installed in a reactive web application
   * @param max the longest deadline a caller may ask for; longer ones are cut to it
   * @param defaultBudget the deadline of a request that carries no header (cut to {@code max}); 30 s when unset
   */
  public record Inbound(@DefaultValue("true") boolean enabled, @DefaultValue("5m") Duration max,
      Duration defaultBudget) {}

  /**
   * Circuit breakers of the {@code CircuitBreakerRegistry}.
   *
   * @param defaults settings of every breaker
   * @param instances settings of a tool's own breaker, by tool name, over the defaults
   * @param families settings of a family's breaker, by family name, over the defaults
   * @param stateStore where breakers share their transitions: {@code memory} (this instance only) or {@code redis}
   */
  public record Breakers(@DefaultValue BreakerSettings defaults, Map<String, BreakerSettings> instances,
      Map<String, BreakerSettings> families, @DefaultValue("memory") StateStore stateStore) {

    public Breakers {
      instances = ordered(instances);
      families = ordered(families);
    }
  }

  /** Where breakers share their state. */
  public enum StateStore {
    /** Each instance alone. */
    MEMORY,
    /** Through Redis, with the application's {@code RedissonClient}. */
    REDIS
  }

  /**
   * One breaker's settings; each one left out is the defaults' (or the core default).
   *
   * @param failureRateThreshold fraction of failed calls at which the breaker opens (default 0.5)
   * @param minimumCalls calls the window must hold before a rate can open the breaker (default 20)
   * @param slidingWindow how far back the rates look (default 60s)
   * @param windowBuckets buckets the window rolls over in (default 10)
   * @param openDuration how long the breaker stays open before a probe (default 30s)
   * @param openDurationMultiplier growth of the open duration on each reopening (default 1: none)
   * @param maxOpenDuration the longest open duration growth reaches (default 5m)
   * @param halfOpenProbes probe calls admitted when half-open (default 1)
   * @param rampUp how long traffic ramps up after closing; 0 for none (default 10s)
   * @param rampUpStartFraction the fraction admitted when the ramp-up starts (default 0.1)
   * @param slowCallThreshold a call at least this slow is slow; 0 turns the slow-call trigger off (default 30s)
   * @param slowCallRateThreshold fraction of slow calls at which the breaker opens (default 0.8)
   * @param countRateLimited whether 429s count as failures (default false)
   * @param countUnknown whether unclassified failures count (default true)
   */
  public record BreakerSettings(Double failureRateThreshold, Integer minimumCalls, Duration slidingWindow,
      Integer windowBuckets, Duration openDuration, Double openDurationMultiplier, Duration maxOpenDuration,
      Integer halfOpenProbes, Duration rampUp, Double rampUpStartFraction, Duration slowCallThreshold,
      Double slowCallRateThreshold, Boolean countRateLimited, Boolean countUnknown) {}

  /**
   * Retry policies and budgets. A tool, or a call to {@code RetryPolicies.policy(name)}, with no policy configured
   * gets one named after it with the defaults.
   *
   * @param defaults settings of every policy
   * @param policies settings of each named policy, over the defaults
   * @param budgets settings of each named retry budget; a policy uses the budget of its own name unless it names
   *     another
   */
  public record Retry(@DefaultValue RetrySettings defaults, Map<String, RetrySettings> policies,
      Map<String, BudgetSettings> budgets) {

    public Retry {
      policies = ordered(policies);
      budgets = ordered(budgets);
    }
  }

  /**
   * One retry policy's settings; each one left out is the defaults' (or the core default).
   *
   * @param maxRetries retries after the first attempt (default 3)
   * @param backoff the delay before each retry (default full jitter, 200ms to 10s)
   * @param timeoutBase the backoff's base after a timeout; 0 keeps the backoff's own (default 1s)
   * @param rateLimitedBase the least wait after a 429 without Retry-After (default 5s)
   * @param retryAfterCap the longest Retry-After honoured (default 60s)
   * @param minAttemptTime no attempt starts with less time than this left (default 100ms)
   * @param budget the name of the retry budget to draw on (default the policy's name)
   */
  public record RetrySettings(Integer maxRetries, BackoffSettings backoff, Duration timeoutBase,
      Duration rateLimitedBase, Duration retryAfterCap, Duration minAttemptTime, String budget) {}

  /**
   * A backoff.
   *
   * @param type the shape (default full-jitter)
   * @param base the first delay's exponential step, or the fixed delay (default 200ms)
   * @param cap the longest delay (default 10s)
   * @param jitterFraction the spread of an exponential backoff, 0 to 1 (default 0.2, exponential only)
   */
  public record BackoffSettings(@DefaultValue("full-jitter") BackoffType type, @DefaultValue("200ms") Duration base,
      @DefaultValue("10s") Duration cap, @DefaultValue("0.2") double jitterFraction) {}

  /** The shapes of {@code io.breakwater.retry.Backoff}. */
  public enum BackoffType {
    FULL_JITTER, EQUAL_JITTER, DECORRELATED_JITTER, EXPONENTIAL, FIXED
  }

  /**
   * A retry budget: a token bucket that keeps retries below a share of calls.
   *
   * @param ratio share of calls that may be retried (default 0.15)
   * @param minRetriesPerSecond retries allowed per second whatever the traffic (default 0)
   * @param shared whether the budget is shared by every instance through Redis (default false)
   */
  public record BudgetSettings(@DefaultValue("0.15") double ratio, @DefaultValue("0") double minRetriesPerSecond,
      @DefaultValue("false") boolean shared) {}

  /**
   * The idempotency store and policy.
   *
   * @param store {@code auto} (Redis when the application has a {@code RedissonClient}, else memory), {@code memory}
   *     or {@code redis}
   * @param ttl how long an outcome is kept and replayed (default 24h)
   * @param lease how long a claim is held without a deadline (default 30s, renewed while the call runs)
   * @param pollInterval how often a waiting duplicate looks again (default 1s)
   * @param failFastWhenInFlight duplicates fail at once instead of waiting (default false)
   * @param cacheNonRetryableFailures the dependency's refusals are replayed to duplicates (default false)
   * @param failOpenForReads read-only calls run when the store is down (default false)
   * @param maxResultBytes the largest result kept (default 1 MiB)
   * @param longestRetryWindow if set, a ttl shorter than it fails start-up
   * @param maxBytes the in-memory store's bound, weighed by the bytes its records hold (default 64MB, at least 1MB)
   * @param keySecret the per-deployment secret under which store keys, and the key sent to dependencies, are
   *     HMAC-SHA-256 hashes: base64 of 32 or more random bytes, the same on every instance (e.g.
   *     {@code openssl rand -base64 32}); required for the Redis store and with {@code sendKeyToHosts}, optional
   *     otherwise (the in-memory store then draws its own). Set it from a secret, e.g. the environment variable
   *     {@code BREAKWATER_IDEMPOTENCY_KEYSECRET}
   * @param sendKeyToHosts the hosts (exact names, e.g. {@code api.stripe.com}) to which the Boot-built
   *     {@code WebClient}s send the idempotency key in force, in its keyed form only; none by default
   * @param redis the Redis store's settings
   */
  public record Idempotency(@DefaultValue("auto") IdempotencyStoreType store, Duration ttl, Duration lease,
      Duration pollInterval, Boolean failFastWhenInFlight, Boolean cacheNonRetryableFailures, Boolean failOpenForReads,
      Integer maxResultBytes, Duration longestRetryWindow, @DefaultValue("64MB") DataSize maxBytes,
      String keySecret, List<String> sendKeyToHosts, @DefaultValue RedisSettings redis) {

    public Idempotency {
      sendKeyToHosts = sendKeyToHosts == null ? List.of() : List.copyOf(sendKeyToHosts);
    }

    @Override
    public String toString() {
      return "Idempotency[store=" + store + ", ttl=" + ttl + ", lease=" + lease + ", maxBytes=" + maxBytes
          + ", keySecret=" + (keySecret == null ? "unset" : "(hidden)") + ", sendKeyToHosts=" + sendKeyToHosts
          + ", redis=" + redis + "]";
    }
  }

  /** Where idempotency records live. */
  public enum IdempotencyStoreType {
    /** Redis when the application has a {@code RedissonClient} and {@code breakwater-redis-store} is present. */
    AUTO,
    /** In this instance's memory. */
    MEMORY,
    /** Redis; start-up fails without a {@code RedissonClient}. */
    REDIS
  }

  /**
   * Redis settings of the stores.
   *
   * @param keyPrefix prefix of idempotency records (default bw:idem:)
   * @param channel pub/sub channel announcing completions (default bw:idem:changed)
   * @param operationTimeout the longest one store operation may take (default 2s)
   */
  public record RedisSettings(String keyPrefix, String channel, Duration operationTimeout) {}

  /**
   * One tool's descriptor settings.
   *
   * @param sideEffect what the tool does to the world: read-only, idempotent-write, non-idempotent-write (required)
   * @param family the tool's family; empty for none (default the name up to its first dot)
   * @param timeouts the per-attempt timeout (default adaptive)
   * @param retry the name of the retry policy (default the tool's name)
   * @param breakers whether the registry's tool and family breakers guard every attempt
   * @param idempotency whether calls happen at most once per key, with the application's idempotency policy
   * @param tenantKey with idempotency: the Reactor Context key under which each call's tenant is, the namespace of
   *     its keys (one of this and {@code singleTenant} is required with idempotency)
   * @param singleTenant with idempotency: one tenant only ever calls the tool, so its keys share the default namespace
   * @param transientFields argument fields left out of the idempotency key
   * @param unavailableAfter failed calls of a kind after which the tool is written off for the task
   * @param alternates tools the model may use instead
   * @param redact fields to mask, on top of the defaults
   * @param logArgs top-level argument fields written in call events
   * @param concurrencyLimit the name of the concurrency limit (under {@code breakwater.limits.concurrency}) every
   *     attempt holds a permit of; none when unset
   * @param rateLimit the name of the rate limit (under {@code breakwater.limits.rate}) every attempt takes one request
   *     of; none when unset (token weights are set in code: {@code ToolDescriptors.builder(name).rateLimit(..)})
   */
  public record Tool(SideEffect sideEffect, String family, @DefaultValue TimeoutSettings timeouts, String retry,
      @DefaultValue("true") boolean breakers, @DefaultValue("false") boolean idempotency, String tenantKey,
      @DefaultValue("false") boolean singleTenant, List<String> transientFields,
      Map<FailureKind, Integer> unavailableAfter, List<String> alternates, List<String> redact,
      List<String> logArgs, String concurrencyLimit, String rateLimit) {

    public Tool {
      transientFields = transientFields == null ? List.of() : List.copyOf(transientFields);
      unavailableAfter = unavailableAfter == null ? Map.of() : Map.copyOf(unavailableAfter);
      alternates = alternates == null ? List.of() : List.copyOf(alternates);
      redact = redact == null ? List.of() : List.copyOf(redact);
      logArgs = logArgs == null ? List.of() : List.copyOf(logArgs);
    }
  }

  /**
   * A tool's per-attempt timeout: {@code fixed}, or adaptive (learnt from its latencies) when {@code fixed} is unset.
   *
   * @param fixed every attempt gets this timeout
   * @param percentile the adaptive timeout's latency percentile (default 99)
   * @param sigmas use mean + sigmas × standard deviation instead of a percentile
   * @param buffer added to the learnt latency (default 250ms)
   * @param min the least adaptive timeout (default 500ms)
   * @param max the greatest adaptive timeout (default 30s)
   * @param warmUpTime how long after the first success attempts still get {@code max} (default 1m)
   * @param warmUpSamples successes needed before the learnt timeout is used (default 50)
   */
  public record TimeoutSettings(Duration fixed, Double percentile, Double sigmas, Duration buffer, Duration min,
      Duration max, Duration warmUpTime, Integer warmUpSamples) {}

  /**
   * The Actuator health contributor {@code breakwater}.
   *
   * @param openStatus the status reported while a breaker is not closed: {@code DEGRADED} (informative; the
   *     application's aggregate status stays UP unless DEGRADED is added to
   *     {@code management.endpoint.health.status.order}) or {@code DOWN}
   */
  public record Health(@DefaultValue("DEGRADED") String openStatus) {}

  /**
   * {@code BreakwaterExchangeFilter} (module {@code breakwater-spring-webflux}, when it is on the classpath) on every
   * {@code WebClient.Builder} that Spring Boot builds: the deadline header (named by {@code breakwater.deadline.header})
   * and the idempotency key (in its keyed form, only to the hosts of {@code breakwater.idempotency.send-key-to-hosts})
   * go out, error statuses come back as {@code HttpStatusException}s.
   *
   * @param enabled whether the starter registers the filter through a {@code WebClientCustomizer}
   */
  public record WebClientFilter(@DefaultValue("true") boolean enabled) {}

  /**
   * Concurrency limits ({@code limitedBy}) and rate limits ({@code throttledBy}) by name, for code
   * ({@code Limits.concurrency(name)}, {@code Limits.rate(name)}) and tools ({@code concurrency-limit},
   * {@code rate-limit}).
   *
   * @param concurrency concurrency limits, by name
   * @param rate rate limits, by name
   */
  public record Limits(Map<String, ConcurrencySettings> concurrency, Map<String, RateSettings> rate) {

    public Limits {
      concurrency = ordered(concurrency);
      rate = ordered(rate);
    }
  }

  /**
   * One concurrency limit: {@code limit} (fixed) or {@code adaptive}, not both.
   *
   * @param limit at most this many calls in flight
   * @param adaptive learn the limit from latency and drops (default false)
   * @param initial an adaptive limit's start (default 20)
   * @param min an adaptive limit's floor (default 1)
   * @param max an adaptive limit's ceiling (default 200)
   * @param maxWait the longest a call waits for a permit; 0 refuses at once (default 10s)
   * @param maxQueue calls that may wait at once (default 1000)
   * @param maxQueuePerTask calls of one agent task that may wait at once, 1 to {@code maxQueue} (default half of
   *     {@code maxQueue})
   * @param shared whether every instance shares the limit through Redis (fixed limits only; default false)
   * @param lease how soon a dead instance's shared permits come back (default 30s)
   */
  public record ConcurrencySettings(Integer limit, @DefaultValue("false") boolean adaptive, Integer initial,
      Integer min, Integer max, Duration maxWait, Integer maxQueue, Integer maxQueuePerTask,
      @DefaultValue("false") boolean shared, Duration lease) {}

  /**
   * One rate limit: requests and tokens per interval, and the provider headers it learns from.
   *
   * @param requests requests per interval (default unlimited)
   * @param tokens tokens per interval (default unlimited)
   * @param interval the interval of {@code requests} and {@code tokens} (default 1m)
   * @param providerHeaders whose rate-limit headers are read: all, open-ai, anthropic, retry-after or none
   *     (default all)
   * @param maxWait the longest a call waits; 0 refuses at once (default 30s)
   * @param maxQueue calls that may wait at once (default 1000)
   * @param maxQueuePerTask calls of one agent task that may wait at once, 1 to {@code maxQueue} (default half of
   *     {@code maxQueue})
   * @param shared whether every instance shares the buckets through Redis (default false)
   */
  public record RateSettings(Long requests, Long tokens, @DefaultValue("1m") Duration interval,
      @DefaultValue("all") ProviderHeaders providerHeaders, Duration maxWait, Integer maxQueue,
      Integer maxQueuePerTask, @DefaultValue("false") boolean shared) {}

  /** The readers of {@code io.breakwater.limit.ProviderRateLimits}. */
  public enum ProviderHeaders {
    ALL, OPEN_AI, ANTHROPIC, RETRY_AFTER, NONE
  }

  /**
   * The Spring AI integration, active when {@code breakwater-spring-ai} and Spring AI's {@code ChatClient} are on the
   * class path: every {@code ChatClient.Builder} that Boot builds gets a {@code BreakwaterAdvisor}, and each
   * {@code ToolCallback} and {@code ToolCallbackProvider} bean whose tool is configured under {@code breakwater.tools}
   * (by the tool's name as the model knows it) runs its calls as that Breakwater tool.
   *
   * @param enabled whether the integration is installed (default true)
   * @param model the guarded model's name: its breaker is the registry's {@code llm:<model>}, configured under
   *     {@code breakwater.breakers.instances."[llm:<model>]"} (default chat)
   * @param order where the advisor sits: {@code each-model-round}, inside Spring AI's tool-calling advisor (each model
   *     request of the tool loop guarded), or {@code whole-turn}, around it (one deadline for the turn, tools
   *     included) (default each-model-round)
   * @param deadline the deadline of each request (default: the one in the caller's Reactor Context, if any)
   * @param firstToken the longest wait for the first content of a stream (default: from the deadline in force, 12s
   *     without one)
   * @param idle the longest stall of a stream after its first content (default: from the deadline in force, 3s
   *     without one)
   * @param callTimeout the most each attempt of a blocking {@code call()} may take (default 2m)
   * @param retry the name of the retry policy of the requests, under {@code breakwater.retry.policies} (default: 2
   *     retries, full jitter)
   * @param rateLimit the name of the provider's rate limit, under {@code breakwater.limits.rate} (default none)
   * @param tools whether configured tool callback beans are wrapped (default true)
   */
  public record SpringAi(@DefaultValue("true") boolean enabled, @DefaultValue("chat") String model,
      @DefaultValue("each-model-round") AdvisorOrder order, Duration deadline, Duration firstToken, Duration idle,
      Duration callTimeout, String retry, String rateLimit, @DefaultValue("true") boolean tools) {}

  /** Where the Spring AI advisor sits relative to Spring AI's tool-calling advisor. */
  public enum AdvisorOrder {
    /** Inside the tool loop: each model request is guarded on its own. */
    EACH_MODEL_ROUND,
    /** Around the tool loop: one guard (and deadline) for the whole turn, tools included. */
    WHOLE_TURN
  }
}
