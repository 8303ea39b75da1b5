package io.breakwater.internal.boot;

import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.boot.BreakwaterProperties;
import io.breakwater.boot.BreakwaterProperties.BackoffSettings;
import io.breakwater.boot.BreakwaterProperties.BreakerSettings;
import io.breakwater.boot.BreakwaterProperties.ConcurrencySettings;
import io.breakwater.boot.BreakwaterProperties.RateSettings;
import io.breakwater.boot.BreakwaterProperties.RetrySettings;
import io.breakwater.boot.BreakwaterProperties.TimeoutSettings;
import io.breakwater.boot.Limits;
import io.breakwater.breaker.BreakerStateStore;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.internal.idempotency.InMemoryIdempotencyStore;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.ProviderRateLimits;
import io.breakwater.limit.RateLimit;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.Base64;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Turns {@code breakwater.*} settings into the core's immutable configurations through their builders, so that every
 * check and default is the core's own. A builder's refusal becomes an {@link InvalidPropertiesException} that names
 * the property.
 */
final class FromProperties {

  private FromProperties() {}

  /** The path of a map entry: {@code prefix.key}, or {@code prefix[key]} when the key has a dot. */
  static String path(String prefix, String key) {
    return key.indexOf('.') >= 0 || key.indexOf('[') >= 0 ? prefix + "[" + key + "]" : prefix + "." + key;
  }

  /** Runs {@code build}, naming {@code property} in any refusal. */
  static <T> T checked(String property, Supplier<T> build) {
    try {
      return build.get();
    } catch (InvalidPropertiesException e) {
      throw e;
    } catch (IllegalArgumentException | IllegalStateException | NullPointerException e) {
      throw new InvalidPropertiesException(property, UserTerms.of(String.valueOf(e.getMessage())), e);
    } catch (ArithmeticException e) {
      // every conversion saturates today; should one not, the start-up still names the property to change
      throw new InvalidPropertiesException(property, "a value too large to compute with (" + e.getMessage()
          + "): give a smaller one", e);
    }
  }

  @Nullable
  static <T> T first(@Nullable T own, @Nullable T fallback) {
    return own != null ? own : fallback;
  }

  static <T> void ifSet(@Nullable T value, Consumer<T> set) {
    if (value != null) {
      set.accept(value);
    }
  }

  static DeadlineSpec deadlineTemplate(BreakwaterProperties.Deadline d) {
    return checked("breakwater.deadline", () -> {
      DeadlineSpec.Builder b = DeadlineSpec.builder(Duration.ofSeconds(1));
      ifSet(d.perCallFraction(), b::perCallFraction);
      ifSet(d.perCallCap(), b::perCallCap);
      ifSet(d.idleFraction(), b::idleFraction);
      ifSet(d.idleCap(), b::idleCap);
      return b.build();
    });
  }

  static CircuitBreaker breaker(String name, String property, @Nullable BreakerSettings own,
      BreakerSettings defaults, MeterRegistry meters, @Nullable BreakerStateStore store) {
    BreakerSettings s = own == null ? defaults : own;
    return checked(property, () -> {
      CircuitBreaker.Builder b = CircuitBreaker.builder(name).meterRegistry(meters);
      ifSet(first(s.failureRateThreshold(), defaults.failureRateThreshold()), b::failureRateThreshold);
      ifSet(first(s.minimumCalls(), defaults.minimumCalls()), b::minimumCalls);
      b.slidingWindow(orDefault(first(s.slidingWindow(), defaults.slidingWindow()),
              CircuitBreaker.DEFAULT_SLIDING_WINDOW),
          orDefault(first(s.windowBuckets(), defaults.windowBuckets()), CircuitBreaker.DEFAULT_WINDOW_BUCKETS));
      ifSet(first(s.openDuration(), defaults.openDuration()), b::openDuration);
      b.openDurationGrowth(
          orDefault(first(s.openDurationMultiplier(), defaults.openDurationMultiplier()),
              CircuitBreaker.DEFAULT_OPEN_DURATION_MULTIPLIER),
          orDefault(first(s.maxOpenDuration(), defaults.maxOpenDuration()), CircuitBreaker.DEFAULT_MAX_OPEN_DURATION));
      ifSet(first(s.halfOpenProbes(), defaults.halfOpenProbes()), b::halfOpenProbes);
      b.rampUp(orDefault(first(s.rampUp(), defaults.rampUp()), CircuitBreaker.DEFAULT_RAMP_UP),
          orDefault(first(s.rampUpStartFraction(), defaults.rampUpStartFraction()),
              CircuitBreaker.DEFAULT_RAMP_UP_START_FRACTION));
      Duration slow = orDefault(first(s.slowCallThreshold(), defaults.slowCallThreshold()),
          CircuitBreaker.DEFAULT_SLOW_CALL_THRESHOLD);
      if (slow.isZero()) {
        b.noSlowCallTrigger();
      } else {
        b.slowCall(slow, orDefault(first(s.slowCallRateThreshold(), defaults.slowCallRateThreshold()),
            CircuitBreaker.DEFAULT_SLOW_CALL_RATE_THRESHOLD));
      }
      ifSet(first(s.countRateLimited(), defaults.countRateLimited()), b::countRateLimited);
      ifSet(first(s.countUnknown(), defaults.countUnknown()), b::countUnknown);
      ifSet(store, b::stateStore);
      return b.build();
    });
  }

  /**
   * A registry whose tool and family breakers take their settings from {@code breakers}; every configured instance
   * and family is created (and so validated) now.
   */
  static CircuitBreakerRegistry breakers(BreakwaterProperties.Breakers breakers, MeterRegistry meters,
      @Nullable BreakerStateStore store) {
    String prefix = "breakwater.breakers";
    BreakerSettings defaults = breakers.defaults();
    breaker("defaults", prefix + ".defaults", null, defaults, new SimpleMeterRegistry(), null);
    Function<String, CircuitBreaker> tools = name -> breaker(name, path(prefix + ".instances", name),
        breakers.instances().get(name), defaults, meters, store);
    Function<String, CircuitBreaker> families = name -> breaker(name, path(prefix + ".families", name),
        breakers.families().get(name), defaults, meters, store);
    CircuitBreakerRegistry registry = CircuitBreakerRegistry.builder().breakers(tools).familyBreakers(families)
        .build();
    breakers.instances().keySet().forEach(registry::breaker);
    breakers.families().keySet().forEach(registry::familyBreaker);
    return registry;
  }

  static Backoff backoff(BackoffSettings b) {
    return switch (b.type()) {
      case FULL_JITTER -> Backoff.fullJitter(b.base(), b.cap());
      case EQUAL_JITTER -> Backoff.equalJitter(b.base(), b.cap());
      case DECORRELATED_JITTER -> Backoff.decorrelatedJitter(b.base(), b.cap());
      case EXPONENTIAL -> Backoff.exponential(b.base(), b.cap(), b.jitterFraction());
      case FIXED -> Backoff.fixed(b.base());
    };
  }

  static RetryPolicy retryPolicy(String name, String property, @Nullable RetrySettings own, RetrySettings defaults,
      RetryBudget budget, MeterRegistry meters) {
    RetrySettings s = own == null ? defaults : own;
    return checked(property, () -> {
      RetryPolicy.Builder b = RetryPolicy.builder().name(name).budget(budget).meterRegistry(meters);
      ifSet(first(s.maxRetries(), defaults.maxRetries()), b::maxRetries);
      BackoffSettings backoff = first(s.backoff(), defaults.backoff());
      if (backoff != null) {
        b.backoff(backoff(backoff));
      }
      ifSet(first(s.timeoutBase(), defaults.timeoutBase()), b::timeoutBase);
      ifSet(first(s.rateLimitedBase(), defaults.rateLimitedBase()), b::rateLimitedBase);
      ifSet(first(s.retryAfterCap(), defaults.retryAfterCap()), b::retryAfterCap);
      ifSet(first(s.minAttemptTime(), defaults.minAttemptTime()), b::minAttemptTime);
      return b.build();
    });
  }

  /** The name of the budget a policy draws on: the one it names, else its own. */
  static String budgetName(String policy, @Nullable RetrySettings own, RetrySettings defaults) {
    String named = own == null ? null : own.budget();
    String fallback = defaults.budget();
    return named != null ? named : fallback != null ? fallback : policy;
  }

  static IdempotencyPolicy idempotencyPolicy(BreakwaterProperties.Idempotency i, IdempotencyStore store,
      MeterRegistry meters) {
    return checked("breakwater.idempotency", () -> {
      IdempotencyPolicy.Builder b = IdempotencyPolicy.builder(store).meterRegistry(meters);
      ifSet(i.ttl(), b::ttl);
      ifSet(i.lease(), b::lease);
      ifSet(i.pollInterval(), b::pollInterval);
      if (Boolean.TRUE.equals(i.failFastWhenInFlight())) {
        b.failFastWhenInFlight();
      }
      ifSet(i.cacheNonRetryableFailures(), b::cacheNonRetryableFailures);
      ifSet(i.failOpenForReads(), b::failOpenForReads);
      ifSet(i.maxResultBytes(), b::maxResultBytes);
      ifSet(i.longestRetryWindow(), b::longestRetryWindow);
      if (i.keySecret() != null) {
        b.keySecret(checked("breakwater.idempotency.key-secret", () -> keySecret(i.keySecret())));
      } else if (!i.sendKeyToHosts().isEmpty()) {
        throw new InvalidPropertiesException("breakwater.idempotency.key-secret", "is not set, and "
            + "breakwater.idempotency.send-key-to-hosts is: the key goes out as an HMAC-SHA-256 under this secret, and "
            + "without it each instance (and each restart) would draw its own, so the dependency could not tell a "
            + "retry sent by another instance from a new request. Set it to 32 or more random bytes in base64 "
            + "(`openssl rand -base64 32`), the same on every instance, from your secret store, e.g. the environment "
            + "variable BREAKWATER_IDEMPOTENCY_KEYSECRET", null);
      } else if (!(store instanceof InMemoryIdempotencyStore)) {
        throw new InvalidPropertiesException("breakwater.idempotency.key-secret", "is not set, and the store is "
            + store.getClass().getSimpleName() + ": keys in a shared store are HMAC-SHA-256 hashes under a secret "
            + "every instance shares. Set it to 32 or more random bytes in base64 (`openssl rand -base64 32`) from "
            + "your secret store, e.g. the environment variable BREAKWATER_IDEMPOTENCY_KEYSECRET", null);
      }
      return b.build();
    });
  }

  /** The secret's bytes from its base64; the message never repeats the value. */
  static byte[] keySecret(String base64) {
    byte[] secret;
    try {
      secret = Base64.getDecoder().decode(base64.strip());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("is not base64 (" + base64.length() + " characters): give 32 or more random "
          + "bytes in base64, e.g. the output of `openssl rand -base64 32`", null);
    }
    if (secret.length < IdempotencyPolicy.MIN_KEY_SECRET_BYTES) {
      throw new IllegalArgumentException("is " + secret.length + " bytes: give " + IdempotencyPolicy.MIN_KEY_SECRET_BYTES
          + " or more random bytes in base64, e.g. the output of `openssl rand -base64 32`");
    }
    return secret;
  }

  static CallTimeouts timeouts(TimeoutSettings t) {
    if (t.fixed() != null) {
      return CallTimeouts.fixed(t.fixed());
    }
    CallTimeouts.Builder b = CallTimeouts.adaptive();
    ifSet(t.percentile(), b::percentile);
    ifSet(t.sigmas(), b::meanPlusSigmas);
    ifSet(t.buffer(), b::buffer);
    if (t.min() != null || t.max() != null) {
      b.bounds(orDefault(t.min(), CallTimeouts.DEFAULT_MIN), orDefault(t.max(), CallTimeouts.DEFAULT_MAX));
    }
    if (t.warmUpTime() != null || t.warmUpSamples() != null) {
      b.warmUp(orDefault(t.warmUpSamples(), CallTimeouts.DEFAULT_WARM_UP_SAMPLES),
          orDefault(t.warmUpTime(), CallTimeouts.DEFAULT_WARM_UP_TIME));
    }
    return b.build();
  }

  /** A concurrency limit with {@code s}'s settings, in memory (a template when shared), its meters in {@code meters}. */
  static ConcurrencyLimit concurrencyLimit(String name, String property, ConcurrencySettings s, MeterRegistry meters) {
    return checked(property, () -> {
      ConcurrencyLimit.Builder b = ConcurrencyLimit.builder(name).meterRegistry(meters);
      if (s.adaptive() == (s.limit() != null)) {
        throw new IllegalArgumentException(s.adaptive()
            ? "sets both limit and adaptive: keep limit for a fixed limit, or adaptive (with initial, min, max)"
            : "sets neither limit nor adaptive: add limit (e.g. 10) or adaptive: true");
      }
      if (s.adaptive()) {
        b.adaptive(orDefault(s.initial(), ConcurrencyLimit.DEFAULT_ADAPTIVE_INITIAL),
            orDefault(s.min(), ConcurrencyLimit.DEFAULT_ADAPTIVE_MIN),
            orDefault(s.max(), ConcurrencyLimit.DEFAULT_ADAPTIVE_MAX));
      } else if (s.initial() != null || s.min() != null || s.max() != null) {
        throw new IllegalArgumentException("sets initial, min or max without adaptive: true: add adaptive: true, "
            + "or remove them");
      } else {
        b.fixed(s.limit());
      }
      ifSet(s.maxWait(), b::maxWait);
      ifSet(s.maxQueue(), b::maxQueue);
      ifSet(s.maxQueuePerTask(), b::maxQueuePerTask);
      return b.build();
    });
  }

  /** A rate limit with {@code s}'s settings, in memory (a template when shared), its meters in {@code meters}. */
  static RateLimit rateLimit(String name, String property, RateSettings s, MeterRegistry meters) {
    return checked(property, () -> {
      RateLimit.Builder b = RateLimit.builder(name).meterRegistry(meters);
      ifSet(s.requests(), n -> b.requests(n, s.interval()));
      ifSet(s.tokens(), n -> b.tokens(n, s.interval()));
      b.providerHeaders(switch (s.providerHeaders()) {
        case ALL -> ProviderRateLimits.all();
        case OPEN_AI -> ProviderRateLimits.openAi();
        case ANTHROPIC -> ProviderRateLimits.anthropic();
        case RETRY_AFTER -> ProviderRateLimits.retryAfter();
        case NONE -> ProviderRateLimits.none();
      });
      ifSet(s.maxWait(), b::maxWait);
      ifSet(s.maxQueue(), b::maxQueue);
      ifSet(s.maxQueuePerTask(), b::maxQueuePerTask);
      return b.build();
    });
  }

  /** What a tool's descriptor needs from the application context. */
  record ToolContext(CircuitBreakerRegistry breakers, Function<String, RetryPolicy> policies,
      Supplier<IdempotencyPolicy> idempotency, MeterRegistry meters, @Nullable ObservationRegistry observations,
      Supplier<Limits> limits) {}

  /** A builder with the tool's settings; validated when built (see {@link #tool}). */
  static ToolDescriptor.Builder toolBuilder(String name, BreakwaterProperties.Tool t, ToolContext context) {
    ToolDescriptor.Builder b = ToolDescriptor.builder(name).meterRegistry(context.meters());
    ifSet(t.sideEffect(), b::sideEffect);
    if (t.family() != null) {
      b.family(t.family().isEmpty() ? null : t.family());
    }
    b.timeouts(timeouts(t.timeouts()));
    b.retry(context.policies().apply(first(t.retry(), name)));
    if (t.breakers()) {
      b.breakers(context.breakers());
    }
    if (t.idempotency()) {
      b.idempotency(context.idempotency().get());
      String tenantKey = t.tenantKey();
      if (tenantKey != null) {
        b.idempotencyNamespace(ctx -> ctx.get(tenantKey));
      }
      if (t.singleTenant()) {
        b.singleTenant();
      }
    }
    b.transientFields(t.transientFields().toArray(String[]::new));
    t.unavailableAfter().forEach(b::unavailableAfter);
    b.alternates(t.alternates().toArray(String[]::new));
    b.redact(t.redact().toArray(String[]::new));
    b.logArgs(t.logArgs().toArray(String[]::new));
    ifSet(context.observations(), b::observationRegistry);
    ifSet(t.concurrencyLimit(), limit -> b.concurrencyLimit(context.limits().get().concurrency(limit)));
    ifSet(t.rateLimit(), limit -> b.rateLimit(context.limits().get().rate(limit)));
    return b;
  }

  static ToolDescriptor tool(String name, BreakwaterProperties.Tool t, ToolContext context) {
    return checked(path("breakwater.tools", name), () -> toolBuilder(name, t, context).build());
  }

  private static <T> T orDefault(@Nullable T value, T fallback) {
    return value != null ? value : fallback;
  }
}
