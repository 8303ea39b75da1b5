package io.breakwater.agent;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.internal.agent.ToolPipeline;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * A tool an agent calls, with its descriptor's resilience built in. Each {@link #call} composes, outermost first:
 *
 * <pre>
 * task budget (deadline, retries, steps, tokens; set by withTaskBudget around the task)
 *   → tool state: written off for this task? fail fast · take a step
 *     → fallbacks (on the final failure, if its kind allows)
 *       → idempotency (key computed once per call, held across retries)
 *         → retry (budget)
 *           → breaker (every attempt)
 *             → per-attempt timeout (adaptive, computed when each attempt starts)
 *               → the call
 * </pre>
 *
 * <pre>{@code
 * Tool<Query, Offers> flights = Tool.of(descriptor, client::search, Offers.class)
 *     .withFallbacks(Fallbacks.<Query, Offers>builder().stale(Duration.ofMinutes(30)).build());
 *
 * Mono<Offers> offers = flights.call(query);                              // value, or the failure
 * Mono<String> forModel = flights.outcome(query).map(ToolOutcome::forModel); // value or feedback, never an error
 * }</pre>
 *
 * <p>Each call is one step of the task, is counted by failure kind in the task's tool state and failure memory,
 * is timed in {@code breakwater.tool.calls}, and writes one JSON event. See {@code docs/agent.md}. Immutable and
 * thread-safe; {@code with…} methods return a new tool that shares the latency history and meters.
 *
 * @param <A> the arguments (a record, a Map or a bean: anything Jackson can write)
 * @param <R> the result
 */
public final class Tool<A, R> {

  private final ToolPipeline<A, R> pipeline;

  private Tool(ToolPipeline<A, R> pipeline) {
    this.pipeline = pipeline;
  }

  /** The tool described by {@code descriptor} that calls {@code call}, returning {@code resultType}. */
  public static <A, R> Tool<A, R> of(ToolDescriptor descriptor, Function<? super A, ? extends Mono<R>> call,
      Class<R> resultType) {
    return new Tool<>(ToolPipeline.create(descriptor, call, mapper(descriptor).constructType(resultType)));
  }

  /** {@link #of(ToolDescriptor, Function, Class)} for a generic result type. */
  public static <A, R> Tool<A, R> of(ToolDescriptor descriptor, Function<? super A, ? extends Mono<R>> call,
      TypeReference<R> resultType) {
    return new Tool<>(ToolPipeline.create(descriptor, call, mapper(descriptor).constructType(resultType)));
  }

  private static ObjectMapper mapper(ToolDescriptor descriptor) {
    Objects.requireNonNull(descriptor, "descriptor");
    return descriptor.idempotency() != null ? descriptor.idempotency().objectMapper() : new ObjectMapper();
  }

  /** This tool with a degradation chain for failures of its trigger kinds. */
  public Tool<A, R> withFallbacks(Fallbacks<A, R> fallbacks) {
    return new Tool<>(pipeline.withFallbacks(Objects.requireNonNull(fallbacks, "fallbacks")));
  }

  /**
   * This tool with idempotency keys of your own, instead of the tool's name and arguments without the descriptor's
   * transient fields. Needs {@code idempotency} in the descriptor. For a tool with an
   * {@link ToolDescriptor.Builder#idempotencyNamespace idempotencyNamespace}, build the key in the Context's namespace
   * with {@link #withIdempotencyKey(BiFunction)}: a key in another namespace fails the call with
   * {@link ToolMisconfiguredException}.
   */
  public Tool<A, R> withIdempotencyKey(Function<? super A, IdempotencyKey> key) {
    Objects.requireNonNull(key, "key");
    return withIdempotencyKey((args, context) -> key.apply(args));
  }

  /**
   * This tool with idempotency keys of your own, built from the arguments and the call's Reactor Context (where the
   * tenant is):
   *
   * <pre>{@code
   * Tool<Cancel, Receipt> cancel = Tool.of(descriptor, orders::cancel, Receipt.class)
   *     .withIdempotencyKey((c, ctx) -> IdempotencyKey.explicit(ctx.get(TENANT), "orders.cancel", c.orderId(), c));
   * }</pre>
   */
  public Tool<A, R> withIdempotencyKey(BiFunction<? super A, ContextView, IdempotencyKey> key) {
    Objects.requireNonNull(key, "key");
    if (pipeline.descriptor().idempotency() == null) {
      throw new IllegalArgumentException("Tool '" + name() + "' has no idempotency policy: add "
          + ".idempotency(IdempotencyPolicy.of(store)) to its descriptor");
    }
    return new Tool<>(pipeline.withKey(key));
  }

  public String name() {
    return pipeline.descriptor().name();
  }

  public ToolDescriptor descriptor() {
    return pipeline.descriptor();
  }

  /**
   * Calls the tool: the value (from the tool or a fallback), empty if the tool completed empty, or the failure no
   * fallback covered (a {@link io.breakwater.BreakwaterException} or the tool's own error).
   */
  public Mono<R> call(A args) {
    return outcome(args).flatMap(o -> o instanceof ToolOutcome.Success<R> s
        ? Mono.justOrEmpty(s.value())
        : Mono.error(((ToolOutcome.Failure<R>) o).error()));
  }

  /**
   * Calls the tool and never fails with the tool's failure: emits a {@link ToolOutcome.Success} (with where the
   * value came from) or a {@link ToolOutcome.Failure} with {@link ToolFailure feedback} for the model. Cancellation
   * still cancels.
   */
  public Mono<ToolOutcome<R>> outcome(A args) {
    return pipeline.run(Objects.requireNonNull(args, "args"));
  }

  /** The per-attempt timeout an attempt started now would get, before the deadline's clamps. */
  public java.time.Duration currentTimeout() {
    return java.time.Duration.ofNanos(pipeline.learntTimeoutNanos());
  }

  @Override
  public String toString() {
    return "Tool{" + name() + "}";
  }
}
