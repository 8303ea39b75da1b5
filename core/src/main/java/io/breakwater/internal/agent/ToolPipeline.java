package io.breakwater.internal.agent;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.breakwater.Breakwater;
import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.StepBudgetExhaustedException;
import io.breakwater.agent.ToolArgumentsRefusedException;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolMisconfiguredException;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.agent.ToolRateLimitedException;
import io.breakwater.agent.TokenBudgetExhaustedException;
import io.breakwater.agent.ToolUnavailableException;
import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyKeyException;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.internal.breaker.AdaptiveCut;
import io.breakwater.internal.deadline.DeadlineOperator;
import io.breakwater.internal.idempotency.CanonicalJson;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.idempotency.IdempotentOperator;
import io.breakwater.internal.retry.RetryAfter;
import io.breakwater.limit.CallWeight;
import io.breakwater.stream.FirstItemTimeoutException;
import io.breakwater.stream.IdleTimeoutException;
import io.micrometer.observation.Observation;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.ContextView;

/**
 * The composition behind {@code Tool.call}: tool state and steps, fallbacks, idempotency, retry, breaker, rate
 * limit, concurrency limit, per-attempt adaptive timeout, call; plus meters, the call event and the Observation. Immutable; the latency
 * history, meters and stale cache are shared by copies made with {@code with…}.
 */
public final class ToolPipeline<A, R> {

  private final ToolDescriptor descriptor;
  private final Function<? super A, ? extends Mono<R>> call;
  private final JavaType resultType;
  @Nullable
  private final BiFunction<? super A, ContextView, IdempotencyKey> key;
  @Nullable
  private final Fallbacks<A, R> fallbacks;
  @Nullable
  private final Cache<String, Object> stale;
  private final LatencyTimeouts latency;
  private final ToolMetrics metrics;
  private final CallEvents events;
  private final Redactor redactor;

  private ToolPipeline(ToolDescriptor descriptor, Function<? super A, ? extends Mono<R>> call, JavaType resultType,
      @Nullable BiFunction<? super A, ContextView, IdempotencyKey> key, @Nullable Fallbacks<A, R> fallbacks,
      @Nullable Cache<String, Object> stale, LatencyTimeouts latency, ToolMetrics metrics, CallEvents events,
      Redactor redactor) {
    this.descriptor = descriptor;
    this.call = call;
    this.resultType = resultType;
    this.key = key;
    this.fallbacks = fallbacks;
    this.stale = stale;
    this.latency = latency;
    this.metrics = metrics;
    this.events = events;
    this.redactor = redactor;
  }

  public static <A, R> ToolPipeline<A, R> create(ToolDescriptor descriptor,
      Function<? super A, ? extends Mono<R>> call, JavaType resultType) {
    java.util.Objects.requireNonNull(call, "call");
    return new ToolPipeline<>(descriptor, call, resultType, null, null, null,
        new LatencyTimeouts(descriptor.timeouts()),
        new ToolMetrics(descriptor.meterRegistry(), descriptor.name(), descriptor.family()),
        new CallEvents(descriptor.eventLog()), new Redactor(descriptor.redact()));
  }

  public ToolPipeline<A, R> withFallbacks(Fallbacks<A, R> chain) {
    Cache<String, Object> cache = chain.steps().stream()
        .filter(s -> s instanceof Fallbacks.Stale<?, ?>)
        .map(s -> (Fallbacks.Stale<?, ?>) s)
        .findFirst()
        .map(s -> Caffeine.newBuilder()
            .maximumSize(s.maxEntries())
            .expireAfterWrite(s.maxAge())
            .ticker(() -> descriptor.scheduler().get().now(TimeUnit.NANOSECONDS))
            .executor(Runnable::run)
            .<String, Object>build())
        .orElse(null);
    return new ToolPipeline<>(descriptor, call, resultType, key, chain, cache, latency, metrics, events, redactor);
  }

  public ToolPipeline<A, R> withKey(BiFunction<? super A, ContextView, IdempotencyKey> idempotencyKey) {
    return new ToolPipeline<>(descriptor, call, resultType, idempotencyKey, fallbacks, stale, latency, metrics,
        events, redactor);
  }

  public ToolDescriptor descriptor() {
    return descriptor;
  }

  @Nullable
  public Fallbacks<A, R> fallbacks() {
    return fallbacks;
  }

  public long learntTimeoutNanos() {
    return latency.learntNanos(descriptor.scheduler().get().now(TimeUnit.NANOSECONDS));
  }

  /** One call: created at subscription. */
  public Mono<ToolOutcome<R>> run(A args) {
    return Mono.deferContextual(ctx -> {
      TaskState task = TaskState.from(ctx);
      Deadline deadline = Deadline.from(ctx).orElse(null);
      Scheduler clock = deadline != null ? deadline.scheduler() : descriptor.scheduler().get();
      CallRecord record = new CallRecord(clock, clock.now(TimeUnit.NANOSECONDS));
      if (task != null) {
        metrics.budget(TaskState.remaining(ctx));
      }
      Observation observation = descriptor.observationRegistry() == null ? null
          : Observation.createNotStarted("breakwater.tool.call", descriptor.observationRegistry())
              .contextualName(descriptor.name())
              .lowCardinalityKeyValue("tool", descriptor.name())
              .lowCardinalityKeyValue("side_effect", descriptor.sideEffect().name().toLowerCase(java.util.Locale.ROOT))
              .start();
      Mono<R> primary = primary(args, task, record);
      if (observation != null) {
        primary = primary.contextWrite(c -> c.put(ObservationThreadLocalAccessor.KEY, observation));
      }
      return primary
          .<ToolOutcome<R>>map(value -> {
            rememberGood(args, value);
            return new ToolOutcome.Success<>(value, ToolOutcome.Source.TOOL, null);
          })
          .switchIfEmpty(Mono.fromSupplier(() -> new ToolOutcome.Success<>(null, ToolOutcome.Source.TOOL, null)))
          .onErrorResume(error -> failed(args, error, ctx, task, record))
          .doOnNext(outcome -> finish(args, outcome, task, record, observation))
          .doOnCancel(() -> cancelled(args, deadline, record, observation));
    });
  }

  private Mono<R> primary(A args, @Nullable TaskState task, CallRecord record) {
    if (task != null) {
      ToolUnavailableException unavailable = task.unavailable(descriptor.name());
      if (unavailable != null) {
        record.refused = true;
        return Mono.error(unavailable);
      }
      long wait = task.coolDownLeft(descriptor.name(), record.clock.now(TimeUnit.NANOSECONDS));
      if (wait > 0) {
        record.refused = true;
        return Mono.error(new ToolRateLimitedException(descriptor.name(), Duration.ofNanos(wait)));
      }
      ToolArgumentsRefusedException refusal = task.refusal(descriptor.name(), () -> argumentsKey(args),
          descriptor.unavailableAfter());
      if (refusal != null) {
        record.refused = true;
        return Mono.error(refusal);
      }
      StepBudgetExhaustedException noStep = task.takeStep();
      if (noStep != null) {
        return Mono.error(noStep);
      }
    }
    Mono<R> attempts = Mono.deferContextual(ctx -> attempt(args, ctx, record));
    attempts = limited(attempts, task);
    if (descriptor.breakers() != null) {
      attempts = attempts.transformDeferred(Breakwater.guardedBy(descriptor.breakers(), descriptor.name()))
          .contextWrite(record.cut::putIn);   // tells the family breaker which timeouts are our adaptive cuts
    }
    if (descriptor.hedge() != null) {
      attempts = attempts.transformDeferred(Breakwater.hedgedBy(descriptor.hedge()));
    }
    attempts = attempts.transformDeferred(Breakwater.retryWithBudget(descriptor.retry()));
    IdempotencyPolicy idempotency = descriptor.idempotency();
    if (idempotency != null) {
      Mono<R> retried = attempts;
      attempts = Mono.deferContextual(ctx -> retried.transformDeferred(
          new IdempotentOperator<R>(idempotencyKey(args, ctx), idempotency, resultType)));
    }
    return attempts.transformDeferred(Breakwater.sideEffect(descriptor.sideEffect()));
  }

  /**
   * Each attempt under the tool's concurrency limit, then its rate limit (a call waiting for a permit takes no request
   * and no tokens); a successful attempt spends from the task's token budget what the rate limit counted: the
   * weight's actual usage, else its estimate.
   */
  private Mono<R> limited(Mono<R> attempts, @Nullable TaskState task) {
    if (descriptor.concurrencyLimit() != null) {
      attempts = attempts.transformDeferred(Breakwater.limitedBy(descriptor.concurrencyLimit()));
    }
    if (descriptor.rateLimit() == null) {
      return attempts;
    }
    @SuppressWarnings("unchecked")
    CallWeight<R> weight = (CallWeight<R>) Objects.requireNonNull(descriptor.rateWeight(), "a rate limit has a weight");
    attempts = attempts.transformDeferred(Breakwater.throttledBy(descriptor.rateLimit(), weight));
    if (task == null || (weight.estimate() == 0 && weight.actual() == null)) {
      return attempts;
    }
    return attempts.handle((value, sink) -> {
      long actual = weight.actual() == null ? -1 : weight.actual().applyAsLong(value);
      TokenBudgetExhaustedException exhausted = task.spendTokens(actual >= 0 ? actual : weight.estimate());
      if (exhausted != null) {
        sink.error(exhausted);
      } else {
        sink.next(value);
      }
    });
  }

  /** The call's key, in the namespace the Context gives (or the default one, for a single-tenant tool). */
  private IdempotencyKey idempotencyKey(A args, ContextView ctx) {
    String namespace = namespace(ctx);
    if (key != null) {
      IdempotencyKey own = key.apply(args, ctx);
      if (namespace != null && !namespace.equals(own.namespace())) {
        throw new ToolMisconfiguredException(descriptor.name(), "the idempotency key given by withIdempotencyKey is "
            + "not in the namespace the Context gives (the tenant): build it with IdempotencyKey.builder(tool)"
            + ".namespace(..) or IdempotencyKey.explicit(namespace, ..) from the Context", null);
      }
      return own;
    }
    IdempotencyKey.Builder derived = IdempotencyKey.builder(descriptor.name()).args(args)
        .excluding(descriptor.transientFields().toArray(String[]::new));
    if (namespace == null) {
      return derived.build();
    }
    try {
      return derived.namespace(namespace).build();
    } catch (IdempotencyKeyException e) {
      try {
        IdempotencyKey.explicit(namespace, descriptor.name(), "namespace-check", "");
      } catch (IdempotencyKeyException badNamespace) {
        throw new ToolMisconfiguredException(descriptor.name(), "the idempotency namespace the Context gives is not "
            + "a plain name: " + badNamespace.getMessage(), badNamespace);
      }
      throw e;   // the arguments are at fault, not the namespace
    }
  }

  /** The namespace the descriptor reads from the Context; {@code null} for a single-tenant tool. */
  @Nullable
  private String namespace(ContextView ctx) {
    Function<ContextView, String> source = descriptor.idempotencyNamespace();
    if (source == null) {
      return null;
    }
    String namespace;
    try {
      namespace = source.apply(ctx);
    } catch (RuntimeException e) {
      throw new ToolMisconfiguredException(descriptor.name(), "its idempotencyNamespace(..) found no namespace (the "
          + "tenant) in the Context (" + e.getClass().getSimpleName() + "): put it there, e.g. "
          + ".contextWrite(Context.of(TENANT, tenantId)) around the task", e);
    }
    if (namespace == null) {
      throw new ToolMisconfiguredException(descriptor.name(), "its idempotencyNamespace(..) gave null: put the "
          + "namespace (the tenant) in the Context, e.g. .contextWrite(Context.of(TENANT, tenantId)) around the task",
          null);
    }
    return namespace;
  }

  private Mono<R> attempt(A args, ContextView ctx, CallRecord record) {
    record.attempts.incrementAndGet();
    Deadline deadline = Deadline.from(ctx).orElse(null);
    Scheduler clock = deadline != null ? deadline.scheduler() : record.clock;
    long start = clock.now(TimeUnit.NANOSECONDS);
    long timeout = latency.timeoutNanos(deadline, start);
    // a cut is ours when the learnt timeout, below its upper bound, is what limits the attempt
    record.cut.attempt(latency.tightened(start) && (deadline == null || timeout < deadline.perCallNanos()));
    return Mono.<R>defer(() -> call.apply(args))
        .transformDeferred(DeadlineOperator.perCall(descriptor.name(), Duration.ofNanos(timeout), () -> clock))
        .doOnSuccess(v -> {
          long end = clock.now(TimeUnit.NANOSECONDS);
          latency.record(end - start, end);
        })
        .doOnError(e -> {
          String type = timeoutType(e);
          if (type != null && !"hard".equals(type)) {   // the task's deadline is counted once, by the call
            record.timeoutType = type;
            metrics.timeout(type);
          }
        });
  }

  private void rememberGood(A args, R value) {
    if (stale != null) {
      stale.put(cacheKey(args), value);
    }
  }

  private static String cacheKey(Object args) {
    return CanonicalJson.sha256(CanonicalJson.write(args, CanonicalJson.Rules.NONE));
  }

  /** The arguments' identity within a task (unredacted, never shown), or {@code null} if they have no JSON form. */
  @Nullable
  private static String argumentsKey(Object args) {
    try {
      return cacheKey(args);
    } catch (RuntimeException notJson) {
      return null;
    }
  }

  private Mono<ToolOutcome<R>> failed(A args, Throwable error, ContextView ctx, @Nullable TaskState task,
      CallRecord record) {
    FailureKind kind = descriptor.classifier().classify(error);
    String type = timeoutType(error);
    if (type != null && type.equals("hard")) {
      record.timeoutType = type;
      metrics.timeout(type);
    } else if (type != null && record.timeoutType == null) {
      record.timeoutType = type;
    }
    String reason = redactor.redactText(FailureAdvice.reason(error), args);
    record.reason = reason;
    record.kind = kind;
    if (task != null && !record.refused && countsAgainstTool(kind)) {
      task.recordFailure(descriptor.name(), kind, reason, descriptor.unavailableAfter(),
          TaskState.callersMistake(kind) ? argumentsKey(args) : null);
      if (kind == FailureKind.RATE_LIMITED) {
        long now = record.clock.now(TimeUnit.NANOSECONDS);
        task.coolDown(descriptor.name(), Saturating.add(now, rateLimitWaitNanos(error, now)));
      }
    }
    Mono<ToolOutcome<R>> failure = Mono.fromSupplier(() -> new ToolOutcome.Failure<>(error,
        FailureAdvice.of(descriptor.name(), descriptor.alternates(), error, kind, reason,
            TaskState.remaining(ctx))));
    // a tool written off for the task falls back as its cause would: never for the caller's own mistakes
    FailureKind trigger = error instanceof ToolUnavailableException unavailable ? unavailable.causeKind() : kind;
    if (fallbacks == null || TaskState.callersMistake(trigger) || !fallbacks.triggeredBy(trigger)) {
      return failure;
    }
    return step(0, args, trigger, record).switchIfEmpty(failure);
  }

  /**
   * How long a rate-limited tool asked to be left alone: the hint of its answer ({@code retry-after-ms} or
   * {@code Retry-After}, read by the parser {@code retryWithBudget} uses, up to the retry policy's cap), else the
   * policy's {@code rateLimitedBase}.
   */
  private long rateLimitWaitNanos(Throwable error, long nowNanos) {
    long cap = Saturating.nanos(descriptor.retry().retryAfterCap());
    long hinted = RetryAfter.hintNanos(error, TimeUnit.NANOSECONDS.toMillis(nowNanos), cap);
    return hinted != RetryAfter.NONE ? hinted : Math.min(Saturating.nanos(descriptor.retry().rateLimitedBase()), cap);
  }

  /**
   * The timeouts and budgets of the task are not the tool's fault; neither is its own misconfiguration, nor a refusal
   * by Breakwater's own limits.
   */
  private static boolean countsAgainstTool(FailureKind kind) {
    return kind != FailureKind.DEADLINE_EXCEEDED && kind != FailureKind.BUDGET_EXHAUSTED
        && kind != FailureKind.MISCONFIGURED && kind != FailureKind.LIMIT_EXCEEDED;
  }

  @Nullable
  private static String timeoutType(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof DeadlineExceededException) {
        return "hard";
      }
      if (t instanceof CallTimeoutException) {
        return "per_call";
      }
      if (t instanceof FirstItemTimeoutException) {
        return "first_item";
      }
      if (t instanceof IdleTimeoutException) {
        return "idle";
      }
    }
    return null;
  }

  private Mono<ToolOutcome<R>> step(int index, A args, FailureKind kind, CallRecord record) {
    List<Fallbacks.Step<A, R>> steps = Objects.requireNonNull(fallbacks, "steps run only with fallbacks").steps();
    if (index == steps.size()) {
      return Mono.empty();
    }
    Fallbacks.Step<A, R> step = steps.get(index);
    if (!Fallbacks.applies(step, kind)) {
      return step(index + 1, args, kind, record);
    }
    Mono<ToolOutcome<R>> next = Mono.defer(() -> step(index + 1, args, kind, record));
    if (step instanceof Fallbacks.Alternate<A, R> alternate) {
      return Mono.<R>defer(() -> alternate.call().apply(args))
          .<ToolOutcome<R>>map(v -> new ToolOutcome.Success<>(v, ToolOutcome.Source.ALTERNATE, alternate.name()))
          .switchIfEmpty(Mono.fromSupplier(
              () -> new ToolOutcome.Success<>(null, ToolOutcome.Source.ALTERNATE, alternate.name())))
          .onErrorResume(e -> {
            record.fallbackErrors.incrementAndGet();
            return next;
          });
    }
    if (step instanceof Fallbacks.Stale<A, R>) {
      @SuppressWarnings("unchecked")
      R value = stale == null ? null : (R) stale.getIfPresent(cacheKey(args));
      return value == null ? next : Mono.just(new ToolOutcome.Success<>(value, ToolOutcome.Source.STALE, null));
    }
    Fallbacks.Default<A, R> fixed = (Fallbacks.Default<A, R>) step;
    return Mono.<ToolOutcome<R>>fromCallable(
            () -> new ToolOutcome.Success<>(fixed.value().apply(args), ToolOutcome.Source.DEFAULT, null))
        .onErrorResume(e -> {
          record.fallbackErrors.incrementAndGet();
          return next;
        });
  }

  private void finish(A args, ToolOutcome<R> outcome, @Nullable TaskState task, CallRecord record,
      @Nullable Observation observation) {
    if (!record.finished.compareAndSet(false, true)) {
      return;
    }
    long nanos = record.clock.now(TimeUnit.NANOSECONDS) - record.start;
    String result;
    String kind = null;
    String fallback = null;
    if (outcome instanceof ToolOutcome.Success<R> success) {
      result = success.degraded() ? "fallback" : "success";
      if (success.degraded()) {
        fallback = success.source() == ToolOutcome.Source.ALTERNATE
            ? "alternate:" + success.via() : success.source().tag();
        if (task != null) {
          task.recordSuccess(descriptor.name(), fallback);
        }
      } else if (task != null) {
        task.recordSuccess(descriptor.name(), null);
      }
    } else {
      ToolOutcome.Failure<R> failure = (ToolOutcome.Failure<R>) outcome;
      kind = failure.feedback().kind().tag();
      result = kind;
      if (observation != null) {
        observation.error(new RedactedError(failure.error(), record.reason));
      }
    }
    metrics.call(result, nanos);
    if (observation != null) {
      observation.lowCardinalityKeyValue("result", result).stop();
    }
    event(args, outcome instanceof ToolOutcome.Success<R> ? (fallback != null ? "fallback" : "success") : "failure",
        result, kind, fallback, record, nanos);
  }

  private void cancelled(A args, @Nullable Deadline deadline, CallRecord record,
      @Nullable Observation observation) {
    if (!record.finished.compareAndSet(false, true)) {
      return;
    }
    long nanos = record.clock.now(TimeUnit.NANOSECONDS) - record.start;
    if (deadline != null && deadline.isExpired()) {
      record.timeoutType = "hard";
      metrics.timeout("hard");
    }
    metrics.call("cancelled", nanos);
    if (observation != null) {
      observation.lowCardinalityKeyValue("result", "cancelled").stop();
    }
    event(args, "cancelled", "cancelled", null, null, record, nanos);
  }

  private void event(A args, String outcome, String result, @Nullable String kind, @Nullable String fallback,
      CallRecord record, long nanos) {
    if (!events.enabled()) {
      return;
    }
    ObjectNode e = events.event();
    e.put("event", "tool_call");
    e.put("tool", descriptor.name());
    e.put("family", descriptor.family());
    e.put("side_effect", descriptor.sideEffect().name().toLowerCase(java.util.Locale.ROOT));
    e.put("args_fingerprint", redactor.fingerprint(args));
    if (!descriptor.logArgs().isEmpty()) {
      e.set("args", redactor.selectFields(args, descriptor.logArgs()));
    }
    e.put("outcome", outcome);
    e.put("result", result);
    e.put("failure_kind", kind != null ? kind : record.kind == null ? null : record.kind.tag());
    e.put("reason", record.reason);
    e.put("fallback", fallback);
    e.put("attempts", record.attempts.get());
    e.put("fallback_errors", record.fallbackErrors.get());
    e.put("duration_ms", nanos / 1e6);
    e.put("timeout_type", record.timeoutType);
    events.emit(e);
  }

  /** What one call has done so far; touched by the call's own signals only. */
  private static final class CallRecord {
    final Scheduler clock;
    final long start;
    final AtomicInteger attempts = new AtomicInteger();
    final AtomicInteger fallbackErrors = new AtomicInteger();
    /** Set by the first of outcome and cancellation: a call is recorded once. */
    final AtomicBoolean finished = new AtomicBoolean();
    /** Whether the attempt now running has a tightened adaptive timeout, for the family breaker. */
    final AdaptiveCut cut = new AdaptiveCut();
    volatile boolean refused;
    volatile @Nullable String timeoutType;
    volatile @Nullable String reason;
    volatile @Nullable FailureKind kind;

    CallRecord(Scheduler clock, long start) {
      this.clock = clock;
      this.start = start;
    }
  }
}
