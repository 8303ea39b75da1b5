package io.breakwater.springai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.Fallbacks;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.RetryPolicy;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.ai.tool.definition.ToolDefinition;
import org.springframework.ai.tool.execution.ToolExecutionException;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;

class BreakwaterToolCallbackTest {

  private final List<String> inputs = new ArrayList<>();
  private final List<ToolContext> contexts = new ArrayList<>();

  /** A callback named {@code name} that records what it is given and answers with {@code answer}. */
  private ToolCallback callback(String name, Supplier<String> answer) {
    ToolDefinition definition = ToolDefinition.builder().name(name).description("a tool")
        .inputSchema("{\"type\":\"object\"}").build();
    return new ToolCallback() {
      @Override
      public ToolDefinition getToolDefinition() {
        return definition;
      }

      @Override
      public String call(String toolInput) {
        inputs.add(toolInput);
        return answer.get();
      }

      @Override
      public String call(String toolInput, ToolContext toolContext) {
        contexts.add(toolContext);
        return call(toolInput);
      }
    };
  }

  private static ToolDescriptor readOnly(String name) {
    return ToolDescriptor.builder(name).sideEffect(SideEffect.READ_ONLY)
        .retry(RetryPolicy.builder().name(name).maxRetries(0).build()).build();
  }

  @Test
  void aDescriptorNamedAfterAnotherToolIsRefusedWithTheNameToGive() {
    assertThatThrownBy(() -> BreakwaterToolCallback.of(callback("book_flight", () -> "ok"), readOnly("booking")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ToolDescriptor.builder(\"book_flight\")");
  }

  @Test
  void theWrappedCallbackGetsTheModelsTextAsItCameAndTheRequestsToolContext() {
    BreakwaterToolCallback tool = BreakwaterToolCallback.of(callback("lookup", () -> "found"), readOnly("lookup"));
    ToolContext context = new ToolContext(Map.of("tenant", "acme"));

    assertThat(tool.call("{ \"b\": 1, \"a\": 2 }", context)).isEqualTo("found");
    assertThat(tool.call("not json")).isEqualTo("found");

    assertThat(inputs).containsExactly("{ \"b\": 1, \"a\": 2 }", "not json");
    assertThat(contexts).containsExactly(context);
    assertThat(BreakwaterToolCallback.arguments("{ \"b\": 1, \"a\": 2 }")).isEqualTo(Map.of("a", 2, "b", 1));
    assertThat(BreakwaterToolCallback.arguments("not json")).isEqualTo(Map.of("input", "not json"));
  }

  @Test
  void aFailureReturnsFeedbackClassifiedByTheCauseOfTheToolExecutionException() {
    ToolCallback failing = callback("lookup", () -> {
      throw new ToolExecutionException(ToolDefinition.builder().name("lookup").inputSchema("{}").build(),
          new UncheckedIOException(new ConnectException("Connection refused")));
    });

    String feedback = BreakwaterToolCallback.of(failing, readOnly("lookup")).call("{}");

    assertThat(feedback).startsWith("tool_failure: lookup\nkind: connection\n");
  }

  @Test
  void aFallbackAnswersWhenTheToolFails() {
    ToolCallback failing = callback("lookup", () -> {
      throw new UncheckedIOException(new ConnectException("Connection refused"));
    });
    BreakwaterToolCallback tool = BreakwaterToolCallback.of(failing, readOnly("lookup"))
        .withFallbacks(Fallbacks.<Map<String, Object>, String>builder().orDefault("no data").build());

    assertThat(tool.call("{}")).startsWith("no data\n(default:");
  }

  @Test
  void aToolCutAtItsTimeoutDropsNoErrorWhenItsThreadIsInterrupted() {
    List<Throwable> dropped = new CopyOnWriteArrayList<>();
    Hooks.onErrorDropped(dropped::add);
    try {
      CountDownLatch interrupted = new CountDownLatch(1);
      ToolCallback stalls = callback("lookup", () -> {
        try {
          new CountDownLatch(1).await();
          return "never";
        } catch (InterruptedException e) {
          interrupted.countDown();
          throw new IllegalStateException("interrupted", e);
        }
      });
      ToolDescriptor cut = ToolDescriptor.builder("lookup").sideEffect(SideEffect.READ_ONLY)
          .timeouts(CallTimeouts.fixed(Duration.ofMillis(100)))
          .retry(RetryPolicy.builder().name("lookup").maxRetries(0).build()).build();

      assertThat(BreakwaterToolCallback.of(stalls, cut).call("{}"))
          .startsWith("tool_failure: lookup\nkind: timeout\n");
      assertThat(interrupted.await(5, TimeUnit.SECONDS)).as("the tool's thread was interrupted").isTrue();
      // a real thread, not virtual time: the interrupted tool's failure would have been dropped by now
      Mono.delay(Duration.ofMillis(300)).block();
      assertThat(dropped).isEmpty();
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    } finally {
      Hooks.resetOnErrorDropped();
    }
  }

  @Test
  void anEmptyResultIsAnEmptyText() {
    assertThat(BreakwaterToolCallback.of(callback("lookup", () -> null), readOnly("lookup")).call("{}")).isEmpty();
  }

  @Test
  void wrappingKeepsToolsWithoutADescriptorAsTheyAre() {
    ToolCallback lookup = callback("lookup", () -> "found");
    ToolCallback clock = callback("clock", () -> "noon");
    Map<String, ToolDescriptor> descriptors = Map.of("lookup", readOnly("lookup"));

    ToolCallback[] wrapped = BreakwaterToolCallback.wrap(new ToolCallback[] {lookup, clock}, descriptors::get);
    ToolCallbackProvider provider = BreakwaterToolCallback.wrap(ToolCallbackProvider.from(lookup, clock),
        descriptors::get);

    assertThat(wrapped[0]).isInstanceOf(BreakwaterToolCallback.class);
    assertThat(wrapped[1]).isSameAs(clock);
    assertThat(provider.getToolCallbacks()[0]).isInstanceOf(BreakwaterToolCallback.class)
        .isSameAs(provider.getToolCallbacks()[0]);
    assertThat(provider.getToolCallbacks()[1]).isSameAs(clock);
  }
}
