package io.breakwater.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.agent.tool.ReturnBehavior;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.exception.ToolArgumentsException;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.invocation.InvocationParameters;
import dev.langchain4j.service.tool.AiServiceTool;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.langchain4j.service.tool.ToolProvider;
import dev.langchain4j.service.tool.ToolProviderRequest;
import dev.langchain4j.service.tool.ToolProviderResult;
import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.RetryPolicy;
import java.net.ConnectException;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** What a guarded executor answers, called as AI Services call it, without a model. */
class ToolGuardTest {

  private static final ToolSpecification WEATHER = ToolSpecification.builder().name("weather").build();
  private static final InvocationContext INVOCATION = InvocationContext.builder()
      .invocationParameters(new InvocationParameters()).build();

  private static ToolDescriptor.Builder weather() {
    return ToolDescriptor.builder("weather").sideEffect(SideEffect.READ_ONLY)
        .retry(RetryPolicy.builder().name("weather").maxRetries(0).build());
  }

  private static ToolExecutor guarded(ToolGuard guard, ToolExecutor executor) {
    return guard.tools(Map.of(WEATHER, executor)).get(WEATHER);
  }

  private static ToolExecutionResult call(ToolExecutor executor, String arguments) {
    return executor.executeWithContext(
        ToolExecutionRequest.builder().id("call_1").name("weather").arguments(arguments).build(), INVOCATION);
  }

  static final class Unknown {
    @Tool("Not described to the guard")
    String stocks(String symbol) {
      return symbol;
    }
  }

  @Test
  void aToolWithoutADescriptorIsRefusedWhereItIsWrapped() {
    ToolGuard guard = ToolGuard.builder().tool(weather().build()).build();

    assertThatThrownBy(() -> guard.tools(new Unknown()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Tool 'stocks' has no descriptor")
        .hasMessageContaining("ToolDescriptor.builder(\"stocks\")");
  }

  @Test
  void aGuardWithoutToolsOrWithATwiceDescribedToolIsRefusedByBuild() {
    assertThatThrownBy(() -> ToolGuard.builder().build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("add .tool(");
    assertThatThrownBy(() -> ToolGuard.builder().tool(weather().build()).tool(weather().build()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'weather' is given twice");
  }

  @Test
  void aSuccessIsTheToolsResultText() {
    ToolExecutor executor = guarded(ToolGuard.builder().tool(weather().build()).build(),
        (request, memoryId) -> "sunny in " + request.arguments());

    ToolExecutionResult result = call(executor, "{\"city\":\"Lyon\"}");

    assertThat(result.isError()).isFalse();
    assertThat(result.resultText()).isEqualTo("sunny in {\"city\":\"Lyon\"}");
  }

  @Test
  void aFailureIsAnErrorResultWithTheFeedbackNotAnException() {
    ToolExecutor executor = guarded(ToolGuard.builder().tool(weather().alternates("forecast").build()).build(),
        (request, memoryId) -> {
          throw new IllegalStateException("weather service down", new ConnectException("refused"));
        });

    ToolExecutionResult result = call(executor, "{\"city\":\"Lyon\"}");

    assertThat(result.isError()).isTrue();
    assertThat(result.resultText()).startsWith("tool_failure: weather\nkind: connection\n")
        .contains("next: call forecast instead");
  }

  @Test
  void aFallbackAnswersWhenTheToolFailsAndIsMarkedForTheModel() {
    AtomicInteger calls = new AtomicInteger();
    ToolExecutor executor = guarded(ToolGuard.builder()
            .tool(weather().build(), Fallbacks.<Map<String, Object>, String>builder()
                .orDefault(args -> "no forecast for " + args.get("city")).build())
            .build(),
        (request, memoryId) -> {
          calls.incrementAndGet();
          throw new IllegalStateException("down", new ConnectException("refused"));
        });

    ToolExecutionResult result = call(executor, "{\"city\":\"Lyon\"}");

    assertThat(calls).hasValue(1);
    assertThat(result.isError()).isFalse();
    assertThat(result.resultText()).startsWith("no forecast for Lyon\n(default:");
  }

  @Test
  void argumentsThatAreNotAJsonObjectAreLangChain4jsArgumentsError() {
    AtomicInteger calls = new AtomicInteger();
    ToolExecutor executor = guarded(ToolGuard.builder().tool(weather().build()).build(),
        (request, memoryId) -> String.valueOf(calls.incrementAndGet()));

    assertThatThrownBy(() -> call(executor, "[\"Lyon\"]"))
        .isInstanceOf(ToolArgumentsException.class).hasMessageContaining("not a JSON object");
    assertThat(call(executor, "").resultText()).as("no arguments: a tool without parameters").isEqualTo("1");
  }

  @Test
  void aProvidersToolsAreGuardedAndKeepTheirReturnBehaviour() {
    ToolProvider provider = new ToolProvider() {
      @Override
      public ToolProviderResult provideTools(ToolProviderRequest request) {
        return ToolProviderResult.builder().add(WEATHER, (r, memoryId) -> {
          throw new IllegalStateException("down", new ConnectException("refused"));
        }, ReturnBehavior.IMMEDIATE).build();
      }

      @Override
      public boolean isDynamic() {
        return true;
      }
    };
    ToolProvider guarded = ToolGuard.builder().tool(weather().build()).build().toolProvider(provider);

    AiServiceTool tool = guarded.provideTools(ToolProviderRequest.builder()
        .invocationContext(INVOCATION).userMessage(UserMessage.from("weather?")).build())
        .aiServiceTools().get(0);

    assertThat(guarded.isDynamic()).isTrue();
    assertThat(tool.returnBehavior()).isEqualTo(ReturnBehavior.IMMEDIATE);
    assertThat(call(tool.toolExecutor(), "{}").resultText()).startsWith("tool_failure: weather\nkind: connection\n");
  }
}
