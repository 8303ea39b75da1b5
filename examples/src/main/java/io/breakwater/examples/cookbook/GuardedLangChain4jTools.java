package io.breakwater.examples.cookbook;

import static io.breakwater.Breakwater.withTaskBudget;

import dev.langchain4j.invocation.InvocationParameters;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.AiServices;
import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.langchain4j.ModelGuard;
import io.breakwater.langchain4j.ToolGuard;
import java.time.Duration;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * A LangChain4j AI Service whose tools are guarded by breakwater-langchain4j's {@link ToolGuard}: a flight search cut
 * at its timeout (the model is told, and can try something else), and a booking that runs once however often the
 * model asks for it with the same arguments.
 */
public final class GuardedLangChain4jTools {

  private GuardedLangChain4jTools() {}

  // snippet:langchain4j-tool-guard
  /** A descriptor for each tool the model may call; the tenant comes from the invocation's parameters. */
  public static ToolGuard guard(IdempotencyStore store) {
    return ToolGuard.builder()
        .tool(ToolDescriptor.builder("searchFlights")
            .sideEffect(SideEffect.READ_ONLY)
            .timeouts(CallTimeouts.fixed(Duration.ofSeconds(2)))   // a stalled search is cut, the model is told
            .build())
        .tool(ToolDescriptor.builder("bookFlight")
            .sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)
            .idempotency(IdempotencyPolicy.of(store))              // the same booking asked twice runs once
            .idempotencyNamespace(ctx -> ctx.get("tenant"))        // each tenant's keys are its own
            .build())
        .context(invocation -> Context.of("tenant", invocation.invocationParameters().get("tenant")))
        .build();
  }
  // end-snippet

  // snippet:langchain4j-tool-service
  /** The AI Service, with its model and each of its tools guarded. */
  public static TravelAssistant assistant(ChatModel model, ToolGuard guard, TravelTools tools) {
    return AiServices.builder(TravelAssistant.class)
        .chatModel(ModelGuard.of("openai").guard(model))
        .tools(guard.tools(tools))                  // the @Tool methods of tools, each with its descriptor
        .build();
  }
  // end-snippet

  // snippet:langchain4j-tool-task
  /**
   * A guard whose tool calls run in the Reactor Context the application passes with each invocation: the task's
   * budget, its tenant.
   */
  public static ToolGuard guardInTasks(IdempotencyStore store) {
    return ToolGuard.builder()
        .tool(ToolDescriptor.builder("searchFlights").sideEffect(SideEffect.READ_ONLY).build())
        .tool(ToolDescriptor.builder("bookFlight")
            .sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)
            .idempotency(IdempotencyPolicy.of(store))
            .idempotencyNamespace(ctx -> ctx.get("tenant"))
            .build())
        .context(invocation -> invocation.invocationParameters().<ContextView>get("reactor"))
        .build();
  }

  /** One question as one task: 60 s and 10 tool calls at most, for {@code tenant}. */
  public static Mono<String> ask(TravelAssistant assistant, String question, String tenant) {
    return Mono.deferContextual(ctx -> Mono.fromCallable(
            () -> assistant.chat(question, InvocationParameters.from("reactor", ctx))))
        .subscribeOn(Schedulers.boundedElastic())   // the AI Service blocks its thread
        .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofSeconds(60)).maxSteps(10).build()))
        .contextWrite(Context.of("tenant", tenant));
  }
  // end-snippet
}
