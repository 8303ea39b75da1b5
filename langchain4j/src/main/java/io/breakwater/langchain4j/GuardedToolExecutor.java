package io.breakwater.langchain4j;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.exception.ToolArgumentsException;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.invocation.InvocationParameters;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.service.tool.ToolExecutor;
import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.internal.BlockingCall;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.ContextView;

/**
 * A LangChain4j {@link ToolExecutor} whose calls run through a Breakwater {@link Tool} (see {@link ToolGuard}): the
 * arguments are the model's JSON, parsed to a map; the value is the wrapped executor's result text; the result the
 * model reads is the outcome's {@link ToolOutcome#forModel()}, an error result when the call failed.
 */
final class GuardedToolExecutor implements ToolExecutor {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TypeReference<Map<String, Object>> ARGUMENTS = new TypeReference<>() {};

  /** The Context key of the call being made: the tool's function reads it, as a tool is shared by many executors. */
  private static final Object CALL = new Object() {
    @Override
    public String toString() {
      return "breakwater.langchain4j.toolCall";
    }
  };

  private final Tool<Map<String, Object>, String> tool;
  private final ToolExecutor delegate;
  private final Function<? super InvocationContext, ? extends ContextView> context;
  private final Scheduler blockingCalls;

  GuardedToolExecutor(Tool<Map<String, Object>, String> tool, ToolExecutor delegate,
      Function<? super InvocationContext, ? extends ContextView> context, Scheduler blockingCalls) {
    this.tool = tool;
    this.delegate = delegate;
    this.context = context;
    this.blockingCalls = blockingCalls;
  }

  /** The Breakwater tool of {@code descriptor}: it runs the executor of the call in its Context. */
  static Tool<Map<String, Object>, String> tool(ToolDescriptor descriptor,
      @Nullable Fallbacks<Map<String, Object>, String> fallbacks) {
    Tool<Map<String, Object>, String> tool = Tool.of(descriptor,
        args -> Mono.deferContextual(ctx -> ctx.<Call>get(CALL).run()), String.class);
    return fallbacks == null ? tool : tool.withFallbacks(fallbacks);
  }

  @Override
  public String execute(ToolExecutionRequest request, Object memoryId) {
    InvocationContext invocation = InvocationContext.builder().chatMemoryId(memoryId)
        .invocationParameters(new InvocationParameters()).build();
    return executeWithContext(request, invocation).resultText();
  }

  @Override
  public ToolExecutionResult executeWithContext(ToolExecutionRequest request, InvocationContext invocation) {
    Objects.requireNonNull(request, "request");
    Map<String, Object> args = arguments(request);
    ContextView extra = callContext(invocation);
    Call call = new Call(delegate, request, invocation, blockingCalls);
    ToolOutcome<String> outcome = tool.outcome(args)
        .contextWrite(ctx -> ctx.putAll(extra).put(CALL, call))
        .block();                                   // the executor's contract: LangChain4j waits for the result
    Objects.requireNonNull(outcome, "a tool call always has an outcome");
    return ToolExecutionResult.builder()
        .isError(outcome instanceof ToolOutcome.Failure<String>)
        .resultText(outcome.forModel())
        .build();
  }

  private ContextView callContext(InvocationContext invocation) {
    try {
      return Objects.requireNonNull(context.apply(invocation), "the context function returned null");
    } catch (RuntimeException e) {
      throw new IllegalStateException("ToolGuard's context(..) found no Context for a call of tool '" + tool.name()
          + "' (" + e + "): give the AI Service what it reads, e.g. its InvocationParameters", e);
    }
  }

  /** The model's arguments: a JSON object, or nothing for a tool without parameters. */
  private Map<String, Object> arguments(ToolExecutionRequest request) {
    String json = request.arguments();
    if (json == null || json.isBlank()) {
      return Map.of();
    }
    try {
      Map<String, Object> args = JSON.readValue(json, ARGUMENTS);
      return args == null ? Map.of() : args;
    } catch (JsonProcessingException e) {
      throw new ToolArgumentsException("The arguments of tool '" + request.name() + "' are not a JSON object: "
          + e.getOriginalMessage(), e);
    }
  }

  /** One call of the wrapped executor. */
  private record Call(ToolExecutor delegate, ToolExecutionRequest request, InvocationContext invocation,
      Scheduler blockingCalls) {

    Mono<String> run() {
      // the executor may block: never on the thread of a timer or a retry; a cut call's failure ends quietly
      return BlockingCall.on(blockingCalls, () -> delegate.executeWithContext(request, invocation).resultText());
    }
  }
}
