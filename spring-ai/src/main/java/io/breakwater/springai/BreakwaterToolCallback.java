package io.breakwater.springai;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.internal.BlockingCall;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.model.tool.internal.ToolCallReactiveContextHolder;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.ai.tool.definition.ToolDefinition;
import org.springframework.ai.tool.execution.ToolExecutionException;
import org.springframework.ai.tool.metadata.ToolMetadata;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * A Spring AI tool callback whose every call is a call of a Breakwater {@link Tool}: the descriptor's per-attempt
 * timeout, retries, breakers, limits, idempotency (in the tenant's namespace) and fallbacks, and, when the call still
 * fails, the failure feedback as the tool's result, so that the model reads what happened and what to do instead of
 * the tool loop ending with an exception:
 *
 * <pre>{@code
 * ToolCallback[] tools = BreakwaterToolCallback.wrap(ToolCallbacks.from(new TravelTools()), descriptors::get);
 * String answer = chat.prompt("Book the 9:40 to Lyon").toolCallbacks(tools)
 *     .toolContext(Map.of("tenant", tenantId))    // read by idempotencyNamespace(ctx -> ctx.get("tenant"))
 *     .call().content();
 * }</pre>
 *
 * <ul>
 *   <li><b>Names.</b> The descriptor's name is the tool's name as the model knows it ({@code ToolDefinition.name()}),
 *       so that feedback, alternates and meters all say the same name.</li>
 *   <li><b>Arguments.</b> The model's JSON arguments, as a {@code Map}, are the {@link Tool}'s arguments: the
 *       idempotency key, the fingerprint in events and the stale-value cache ignore the order of their fields. The
 *       wrapped callback is called with the model's text as it came.</li>
 *   <li><b>Context.</b> Each call runs with a Reactor Context made of the Context Spring AI hands to tool calls of a
 *       {@code stream()} (so a {@code withTaskBudget} or a deadline around the stream reaches its tools: steps,
 *       failure memory, tools written off for the task) and the entries of the request's tool context, under their
 *       names (so {@code idempotencyNamespace(ctx -> ctx.get("tenant"))} reads {@code toolContext(Map.of("tenant",
 *       ..))} in a {@code call()} as in a {@code stream()}).</li>
 *   <li><b>Failures.</b> A call that fails after the retries and fallbacks returns
 *       {@link io.breakwater.agent.ToolFailure#render()} (six short lines: the tool, the kind, the reason, what to do
 *       next, what to avoid, the budget left) as the tool's result. A {@code ToolExecutionException} of the wrapped
 *       callback is classified by its cause.</li>
 *   <li><b>Repeated writes.</b> With {@code idempotency} in the descriptor, a call with the same arguments (fields in
 *       any order, without the {@code transientFields}) in the same namespace runs once: the repeat gets the result
 *       the first call recorded, as its own result, and the model reads the same confirmation twice rather than an
 *       error it might retry around. A repeat while the first still runs waits for its result.</li>
 *   <li><b>Threads.</b> The wrapped callback runs on {@code Schedulers.boundedElastic()}, so that a timeout can cut it
 *       (its thread is interrupted); {@code call} waits for the outcome on the caller's thread, as Spring AI's tool
 *       API is blocking (Spring AI runs the tools of a stream on bounded-elastic threads).</li>
 * </ul>
 *
 * <p>Immutable and thread-safe; build one per tool and share it (its adaptive timeout learns from every call).
 */
public final class BreakwaterToolCallback implements ToolCallback {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() {};
  /** The Context key of the call in progress: what the model sent and the request's tool context. */
  private static final Object INVOCATION = new Object();

  private final ToolCallback delegate;
  private final Tool<Map<String, Object>, String> tool;

  private BreakwaterToolCallback(ToolCallback delegate, Tool<Map<String, Object>, String> tool) {
    this.delegate = delegate;
    this.tool = tool;
  }

  /**
   * {@code callback} guarded by {@code descriptor}, which must carry the callback's tool name.
   *
   * @throws IllegalArgumentException if the descriptor is named after another tool
   */
  public static BreakwaterToolCallback of(ToolCallback callback, ToolDescriptor descriptor) {
    Objects.requireNonNull(callback, "callback");
    Objects.requireNonNull(descriptor, "descriptor");
    String name = callback.getToolDefinition().name();
    if (!name.equals(descriptor.name())) {
      throw new IllegalArgumentException("The descriptor '" + descriptor.name() + "' is given to the tool '" + name
          + "': name the descriptor after the tool as the model knows it, ToolDescriptor.builder(\"" + name + "\")");
    }
    Function<Map<String, Object>, Mono<String>> call = args -> Mono.deferContextual(ctx -> {
      Invocation invocation = ctx.get(INVOCATION);
      return BlockingCall.on(Schedulers.boundedElastic(), invocation::call);   // a cut tool's failure ends quietly
    }).onErrorMap(ToolExecutionException.class, e -> e.getCause() != null ? e.getCause() : e);
    return new BreakwaterToolCallback(callback, Tool.of(descriptor, call, String.class));
  }

  /**
   * Each of {@code callbacks} guarded by the descriptor {@code descriptors} gives for its tool name; a callback it
   * gives none for ({@code null}) is kept as it is. Pass a lookup that throws (e.g. the Boot starter's
   * {@code ToolDescriptors::descriptor}) to require a descriptor for every tool.
   */
  public static ToolCallback[] wrap(ToolCallback[] callbacks,
      Function<String, @Nullable ToolDescriptor> descriptors) {
    Objects.requireNonNull(descriptors, "descriptors");
    ToolCallback[] wrapped = new ToolCallback[callbacks.length];
    for (int i = 0; i < callbacks.length; i++) {
      ToolDescriptor descriptor = descriptors.apply(callbacks[i].getToolDefinition().name());
      wrapped[i] = descriptor == null ? callbacks[i] : of(callbacks[i], descriptor);
    }
    return wrapped;
  }

  /**
   * A provider of the callbacks {@code provider} gives, each guarded as {@link #wrap(ToolCallback[], Function)} does.
   * The callbacks are asked for on each {@code getToolCallbacks()} (a provider may build them then, or discover them
   * on a server), and each tool keeps one {@link Tool} across them, so that its adaptive timeout, state and meters
   * carry over from call to call.
   */
  public static ToolCallbackProvider wrap(ToolCallbackProvider provider,
      Function<String, @Nullable ToolDescriptor> descriptors) {
    Objects.requireNonNull(provider, "provider");
    Objects.requireNonNull(descriptors, "descriptors");
    Map<String, BreakwaterToolCallback> tools = new ConcurrentHashMap<>();
    return () -> {
      ToolCallback[] callbacks = provider.getToolCallbacks();
      ToolCallback[] wrapped = new ToolCallback[callbacks.length];
      for (int i = 0; i < callbacks.length; i++) {
        ToolCallback callback = callbacks[i];
        String name = callback.getToolDefinition().name();
        ToolDescriptor descriptor = descriptors.apply(name);
        wrapped[i] = descriptor == null ? callback
            : tools.compute(name, (n, known) -> known == null || known.tool.descriptor() != descriptor
                ? of(callback, descriptor) : known.around(callback));
      }
      return wrapped;
    };
  }

  /** {@code callback} (the same tool, as a provider gave it again) through this callback's {@link Tool}. */
  private BreakwaterToolCallback around(ToolCallback callback) {
    return callback == delegate ? this : new BreakwaterToolCallback(callback, tool);
  }

  /** This callback with a degradation chain for failures of its trigger kinds (see {@link Tool#withFallbacks}). */
  public BreakwaterToolCallback withFallbacks(Fallbacks<Map<String, Object>, String> fallbacks) {
    return new BreakwaterToolCallback(delegate, tool.withFallbacks(fallbacks));
  }

  /** The Breakwater tool each call runs through. */
  public Tool<Map<String, Object>, String> tool() {
    return tool;
  }

  @Override
  public ToolDefinition getToolDefinition() {
    return delegate.getToolDefinition();
  }

  @Override
  public ToolMetadata getToolMetadata() {
    return delegate.getToolMetadata();
  }

  @Override
  public String call(String toolInput) {
    return call(toolInput, null);
  }

  /** Runs the call through the tool; the result, or the failure feedback. Blocks the calling thread. */
  @Override
  public String call(String toolInput, @Nullable ToolContext toolContext) {
    Objects.requireNonNull(toolInput, "toolInput");
    Context context = Context.of(ToolCallReactiveContextHolder.getContext());
    if (toolContext != null) {
      for (Map.Entry<String, Object> entry : toolContext.getContext().entrySet()) {
        if (entry.getValue() != null) {
          context = context.put(entry.getKey(), entry.getValue());
        }
      }
    }
    ToolOutcome<String> outcome = tool.outcome(arguments(toolInput))
        .contextWrite(context.put(INVOCATION, new Invocation(delegate, toolInput, toolContext)))
        .block();
    if (outcome == null || outcome instanceof ToolOutcome.Success<String> s && s.value() == null && !s.degraded()) {
      return "";
    }
    return outcome.forModel();
  }

  /**
   * The model's arguments as a map; text that is no JSON object is kept whole under {@code "input"} (the wrapped
   * callback then gets it as it came, and says what it makes of it).
   */
  static Map<String, Object> arguments(String toolInput) {
    try {
      Map<String, Object> parsed = JSON.readValue(toolInput, OBJECT);
      return parsed == null ? Map.of() : parsed;
    } catch (JsonProcessingException notAnObject) {
      return Map.of("input", toolInput);
    }
  }

  @Override
  public String toString() {
    return "BreakwaterToolCallback{" + tool.name() + "}";
  }

  /** One call: the wrapped callback, the model's text and the request's tool context. */
  private record Invocation(ToolCallback callback, String input, @Nullable ToolContext toolContext) {
    String call() {
      return toolContext == null ? callback.call(input) : callback.call(input, toolContext);
    }
  }
}
