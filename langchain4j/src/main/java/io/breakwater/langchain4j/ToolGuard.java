package io.breakwater.langchain4j;

import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.service.tool.AiServiceTool;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.langchain4j.service.tool.ToolProvider;
import dev.langchain4j.service.tool.ToolProviderRequest;
import dev.langchain4j.service.tool.ToolProviderResult;
import dev.langchain4j.service.tool.ToolService;
import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * Breakwater's agent layer for the tools of LangChain4j's AI Services: each tool call runs as a call of a Breakwater
 * {@link Tool} described by its {@link ToolDescriptor}, with the descriptor's per-attempt timeout, retries, breakers,
 * limits, idempotency (keys in the tenant's namespace) and fallbacks; a call that fails anyway answers the model with
 * its failure feedback ({@link io.breakwater.agent.ToolFailure}) instead of an exception.
 *
 * <pre>{@code
 * ToolGuard guard = ToolGuard.builder()
 *     .tool(ToolDescriptor.builder("searchFlights").sideEffect(SideEffect.READ_ONLY).build())
 *     .build();
 * Assistant assistant = AiServices.builder(Assistant.class)
 *     .chatModel(model)
 *     .tools(guard.tools(new TravelTools()))   // the @Tool methods of TravelTools, each guarded
 *     .build();
 * }</pre>
 *
 * <ul>
 *   <li><b>Which descriptor</b>: a tool is guarded by the descriptor of its name (the name the model calls it by,
 *       {@link ToolSpecification#name()}). A tool without one is refused where it is wrapped: every tool must declare
 *       its side effect.</li>
 *   <li><b>What the model reads</b>: the tool's result text; a value from a fallback, marked as such; or the failure
 *       feedback, as a result with {@code isError}. The tool's result object ({@code ToolExecutionResult.result()}) is
 *       not kept: the result text is what is stored, replayed and given to fallbacks.</li>
 *   <li><b>A second call of a write</b> with an idempotency policy and the same arguments (and the same tenant) does
 *       not run the tool again: it is answered with the first call's result, so the model reads that the booking was
 *       made, as it was. The key is the tool's name and its arguments without the descriptor's transient fields,
 *       kept as long as the policy keeps outcomes.</li>
 *   <li><b>Threads</b>: LangChain4j calls a tool executor and waits for its result, so each guarded call blocks the
 *       thread that calls it, the AI Service's (on a thread that must not block, such as an event loop, Reactor
 *       refuses it with an {@code IllegalStateException}: call the AI Service from
 *       {@code Schedulers.boundedElastic()} or a thread of your own). Inside, the guarded call is non-blocking; only
 *       the wrapped executor runs on {@link Builder#blockingCalls a scheduler whose threads may block}
 *       ({@code Schedulers.boundedElastic()} by default), so that a timeout can cut it: its thread is then
 *       interrupted and the model is answered at once.</li>
 *   <li><b>Context</b>: each call's Reactor Context is built from the AI Service invocation by
 *       {@link Builder#context}: put the tenant there for the descriptors'
 *       {@link ToolDescriptor.Builder#idempotencyNamespace idempotencyNamespace}.</li>
 * </ul>
 *
 * <p>Immutable and thread-safe: build one per set of tools and share it; each tool keeps its latency history,
 * meters and stale values across every executor this guard wraps.
 */
public final class ToolGuard {

  private final Map<String, Tool<Map<String, Object>, String>> tools;
  private final Function<? super InvocationContext, ? extends ContextView> context;
  private final Scheduler blockingCalls;

  private ToolGuard(Builder b) {
    Map<String, Tool<Map<String, Object>, String>> byName = new LinkedHashMap<>();
    b.tools.forEach((name, guarded) -> byName.put(name, GuardedToolExecutor.tool(guarded.descriptor(),
        guarded.fallbacks())));
    this.tools = Map.copyOf(byName);
    this.context = b.context;
    this.blockingCalls = b.blockingCalls;
  }

  /** A builder; {@link Builder#build()} validates. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The {@code @Tool} methods of {@code objectsWithTools}, found as AI Services find them (with their return
   * behaviour), each guarded: give the list to {@code AiServices.builder(..).tools(List)}.
   *
   * @throws IllegalArgumentException if a tool has no descriptor in this guard
   */
  public List<AiServiceTool> tools(Object... objectsWithTools) {
    List<AiServiceTool> guarded = new ArrayList<>();
    for (Object objectWithTools : objectsWithTools) {
      for (AiServiceTool tool : ToolService.findTools(Objects.requireNonNull(objectWithTools, "objectsWithTools"))) {
        guarded.add(guard(tool));
      }
    }
    return guarded;
  }

  /**
   * {@code tools}, as {@code AiServices.builder(..).tools(Map)} takes them, each executor guarded by the descriptor of
   * its specification's name.
   *
   * @throws IllegalArgumentException if a tool has no descriptor in this guard
   */
  public Map<ToolSpecification, ToolExecutor> tools(Map<ToolSpecification, ToolExecutor> tools) {
    Objects.requireNonNull(tools, "tools");
    Map<ToolSpecification, ToolExecutor> guarded = new LinkedHashMap<>();
    tools.forEach((specification, executor) -> guarded.put(specification, guard(specification, executor)));
    return guarded;
  }

  /**
   * {@code provider} (an MCP tool provider, a provider of your own), with each tool it provides guarded by the
   * descriptor of its name; a tool without one fails the AI Service invocation that is provided it.
   */
  public ToolProvider toolProvider(ToolProvider provider) {
    Objects.requireNonNull(provider, "provider");
    return new ToolProvider() {
      @Override
      public ToolProviderResult provideTools(ToolProviderRequest request) {
        return new ToolProviderResult(provider.provideTools(request).aiServiceTools().stream()
            .map(ToolGuard.this::guard).toList());
      }

      @Override
      public boolean isDynamic() {
        return provider.isDynamic();
      }
    };
  }

  private AiServiceTool guard(AiServiceTool tool) {
    return tool.toBuilder().toolExecutor(guard(tool.toolSpecification(), tool.toolExecutor())).build();
  }

  /** {@code executor} of the tool {@code specification}, guarded. */
  private ToolExecutor guard(ToolSpecification specification, ToolExecutor executor) {
    Objects.requireNonNull(specification, "specification");
    Objects.requireNonNull(executor, "executor");
    Tool<Map<String, Object>, String> tool = tools.get(specification.name());
    if (tool == null) {
      throw new IllegalArgumentException("Tool '" + specification.name() + "' has no descriptor in this ToolGuard: "
          + "add .tool(ToolDescriptor.builder(\"" + specification.name() + "\").sideEffect(..).build()) to its "
          + "builder (descriptors for " + List.copyOf(tools.keySet()) + ")");
    }
    return new GuardedToolExecutor(tool, executor, context, blockingCalls);
  }

  /** Builds a {@link ToolGuard}. */
  public static final class Builder {

    private final Map<String, Guarded> tools = new LinkedHashMap<>();
    private Function<? super InvocationContext, ? extends ContextView> context = invocation -> Context.empty();
    private Scheduler blockingCalls = Schedulers.boundedElastic();

    private Builder() {}

    private record Guarded(ToolDescriptor descriptor, @Nullable Fallbacks<Map<String, Object>, String> fallbacks) {}

    /** Guard the tool named {@code descriptor.name()} with {@code descriptor}. */
    public Builder tool(ToolDescriptor descriptor) {
      return add(descriptor, null);
    }

    /**
     * Guard the tool named {@code descriptor.name()} with {@code descriptor}, falling back on {@code fallbacks}:
     * their arguments are the tool's, parsed from the model's JSON; their values are result texts.
     */
    public Builder tool(ToolDescriptor descriptor, Fallbacks<Map<String, Object>, String> fallbacks) {
      return add(descriptor, Objects.requireNonNull(fallbacks, "fallbacks"));
    }

    private Builder add(ToolDescriptor descriptor, @Nullable Fallbacks<Map<String, Object>, String> fallbacks) {
      Objects.requireNonNull(descriptor, "descriptor");
      if (tools.putIfAbsent(descriptor.name(), new Guarded(descriptor, fallbacks)) != null) {
        throw new IllegalArgumentException("Tool '" + descriptor.name() + "' is given twice: keep one descriptor "
            + "per tool name");
      }
      return this;
    }

    /**
     * The Reactor Context of each call, built from the AI Service invocation (its {@code InvocationParameters},
     * its chat memory id). Default: empty.
     *
     * <pre>{@code
     * .context(invocation -> Context.of(TENANT, invocation.invocationParameters().get("tenant")))
     * }</pre>
     */
    public Builder context(Function<? super InvocationContext, ? extends ContextView> context) {
      this.context = Objects.requireNonNull(context, "context");
      return this;
    }

    /** Where the wrapped executors run: threads that may block. Default: {@code Schedulers.boundedElastic()}. */
    public Builder blockingCalls(Scheduler scheduler) {
      this.blockingCalls = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    public ToolGuard build() {
      if (tools.isEmpty()) {
        throw new IllegalArgumentException("A ToolGuard without tools guards nothing: add .tool(ToolDescriptor"
            + ".builder(name).sideEffect(..).build()) for each tool the model may call");
      }
      return new ToolGuard(this);
    }
  }
}
