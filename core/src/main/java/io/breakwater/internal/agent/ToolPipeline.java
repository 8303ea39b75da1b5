package io.breakwater.internal.agent;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.breakwater.Breakwater;
import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.StepBudgetExhaustedException;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.agent.ToolRateLimitedException;
import io.breakwater.agent.ToolUnavailableException;
import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineExceededException;
import io.breakwater.failure.FailureKind;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.internal.idempotency.CanonicalJson;
import io.breakwater.internal.Saturating;
import io.breakwater.internal.idempotency.IdempotentOperator;
import io.breakwater.internal.retry.RetryAfter;
import io.breakwater.stream.FirstItemTimeoutException;
import io.breakwater.stream.IdleTimeoutException;
import io.micrometer.observation.Observation;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.annotation.Nullable;
import reactor.util.context.ContextView;

/**
 * The composition behind {@code Tool.call}: tool state and steps, fallbacks, idempotency, retry, breaker,
 * per-attempt adaptive timeout, call; plus meters, the call event and the Observation. Immutable; the latency
 * history, meters and stale cache are shared by copies made with {@code with…}.
 */
public final class ToolPipeline<A, R> {

  private final ToolDescriptor descriptor;
  private final Function<? super A, ? extends Mono<R>> call;
  private final JavaType resultType;
  @Nullable
  private final Function<? super A, IdempotencyKey> key;
  @Nullable
  private final Fallbacks<A, R> fallbacks;
  @Nullable
  private final Cache<String, Object> stale;
  private final LatencyTimeouts latency;
  private final ToolMetrics metrics;
  private final CallEvents events;
  private final Redactor redactor;

  private ToolPipeline(ToolDescriptor descriptor, Function<? super A, ? extends Mono<R>> call, JavaType resultType,
      @Nullable Function<? super A, IdempotencyKey> key, @Nullable Fallbacks<A, R> fallbacks,
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

  public ToolPipeline<A, R> withKey(Function<? super A, IdempotencyKey> idempotencyKey) {
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
    return latency.learntNanos();
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
      StepBudgetExhaustedException noStep = task.takeStep();
      if (noStep != null) {
        return Mono.error(noStep);
      }
    }
    Mono<R> attempts = Mono.deferContextual(ctx -> attempt(args, ctx, record));
    if (descriptor.breakers() != null) {
      attempts = attempts.transformDeferred(Breakwater.guardedBy(descriptor.breakers(), descriptor.name()));
    }
    if (descriptor.hedge() != null) {
      attempts = attempts.transformDeferred(Breakwater.hedgedBy(descriptor.hedge()));
    }
    attempts = attempts.transformDeferred(Breakwater.retryWithBudget(descriptor.retry()));
    if (descriptor.idempotency() != null) {
      Mono<R> retried = attempts;
      attempts = Mono.defer(() -> retried.transformDeferred(
          new IdempotentOperator<R>(idempotencyKey(args), descriptor.idempotency(), resultType)));
    }
    return attempts.transformDeferred(Breakwater.sideEffect(descriptor.sideEffect()));
  }

  private IdempotencyKey idempotencyKey(A args) {
    if (key != null) {
      return key.apply(args);
    }
    return IdempotencyKey.builder(descriptor.name()).args(args)
        .excluding(descriptor.transientFields().toArray(String[]::new)).build();
  }

  private Mono<R> attempt(A args, ContextView ctx, CallRecord record) {
    record.attempts.incrementAndGet();
    Deadline deadline = Deadline.from(ctx).orElse(null);
    Scheduler clock = deadline != null ? deadline.scheduler() : record.clock;
    long timeout = latency.timeoutNanos(deadline);
    long start = clock.now(TimeUnit.NANOSECONDS);
    return Mono.<R>defer(() -> call.apply(args))
        .transformDeferred(Breakwater.perCallTimeout(Duration.ofNanos(timeout)))
        .doOnSuccess(v -> latency.record(clock.now(TimeUnit.NANOSECONDS) - start))
        .doOnError(CallTimeoutException.class, e -> {
          record.timeoutType = "per_call";
          metrics.timeout("per_call");
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

  private Mono<ToolOutcome<R>> failed(A args, Throwable error, ContextView ctx, @Nullable TaskState task,
      CallRecord record) {
    FailureKind kind = descriptor.classifier().classify(error);
    String type = timeoutType(error);
    if ("hard".equals(type)) {
      record.timeoutType = type;
      metrics.timeout(type);
    } else if (type != null && record.timeoutType == null) {
      record.timeoutType = type;
    }
    String reason = redactor.redactText(FailureAdvice.reason(error), args);
    record.reason = reason;
    record.kind = kind;
    if (task != null && !record.refused && countsAgainstTool(kind)) {
      task.recordFailure(descriptor.name(), kind, reason, descriptor.unavailableAfter());
      if (kind == FailureKind.RATE_LIMITED) {
        long now = record.clock.now(TimeUnit.NANOSECONDS);
        task.coolDown(descriptor.name(), Saturating.add(now, rateLimitWaitNanos(error, now)));
      }
    }
    Mono<ToolOutcome<R>> failure = Mono.fromSupplier(() -> new ToolOutcome.Failure<>(error,
        FailureAdvice.of(descriptor.name(), descriptor.alternates(), error, kind, reason,
            TaskState.remaining(ctx))));
    if (fallbacks == null || !fallbacks.triggeredBy(kind)) {
      return failure;
    }
    return step(0, args, kind, record).switchIfEmpty(failure);
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

  /** The timeouts and budgets of the task are not the tool's fault; neither is its own misconfiguration. */
  private static boolean countsAgainstTool(FailureKind kind) {
    return kind != FailureKind.DEADLINE_EXCEEDED && kind != FailureKind.BUDGET_EXHAUSTED
        && kind != FailureKind.MISCONFIGURED;
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
    List<Fallbacks.Step<A, R>> steps = fallbacks.steps();
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
    volatile boolean refused;
    volatile String timeoutType;
    volatile String reason;
    volatile FailureKind kind;

    CallRecord(Scheduler clock, long start) {
      this.clock = clock;
      this.start = start;
    }
  }
}
