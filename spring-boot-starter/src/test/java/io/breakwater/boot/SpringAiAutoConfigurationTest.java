package io.breakwater.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.internal.boot.BreakwaterAutoConfiguration;
import io.breakwater.internal.boot.BreakwaterSpringAiAutoConfiguration;
import io.breakwater.internal.boot.InvalidPropertiesException;
import io.breakwater.springai.BreakwaterAdvisor;
import io.breakwater.springai.BreakwaterToolCallback;
import io.breakwater.idempotency.SideEffect;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.ChatClientBuilderCustomizer;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.ai.tool.function.FunctionToolCallback;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * With {@code breakwater-spring-ai} on the class path, the starter builds the advisor from
 * {@code breakwater.spring-ai.*} and adds it to every {@code ChatClient.Builder} through a customizer, and wraps the
 * tool callback beans whose tools {@code breakwater.tools} configures; names resolve as strictly as the starter's
 * other references.
 */
class SpringAiAutoConfigurationTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(BreakwaterAutoConfiguration.class,
          BreakwaterSpringAiAutoConfiguration.class));

  /** A model that answers 503 {@code failures} times, then "ok". */
  private static ChatModel flaky(AtomicInteger calls, int failures) {
    return new ChatModel() {
      @Override
      public ChatResponse call(Prompt prompt) {
        if (calls.incrementAndGet() <= failures) {
          throw new HttpStatusException(503, Map.of(), "scripted 503");
        }
        return new ChatResponse(List.of(new Generation(new AssistantMessage("ok"))));
      }
    };
  }

  static ToolCallback tool(String name) {
    return FunctionToolCallback.builder(name, (Map<String, Object> in) -> "done " + in)
        .description("a tool").inputType(Map.class).build();
  }

  @Test
  void aCustomizedChatClientBuilderGetsTheConfiguredAdvisorWhichRetriesA503() {
    runner.withPropertyValues("breakwater.spring-ai.model=openai", "breakwater.spring-ai.order=whole-turn",
            "breakwater.spring-ai.retry=llm", "breakwater.retry.policies.llm.max-retries=1",
            "breakwater.retry.policies.llm.backoff.type=fixed", "breakwater.retry.policies.llm.backoff.base=10ms")
        .run(context -> {
          assertThat(context).hasNotFailed().hasSingleBean(BreakwaterAdvisor.class);
          BreakwaterAdvisor advisor = context.getBean(BreakwaterAdvisor.class);
          assertThat(advisor.getName()).isEqualTo("breakwater:openai");
          assertThat(advisor.getOrder()).isEqualTo(BreakwaterAdvisor.WHOLE_TURN);
          assertThat(advisor.guard().breaker()).as("the registry's breaker, so health and the endpoint show it")
              .isSameAs(context.getBean(CircuitBreakerRegistry.class).breaker("llm:openai"));

          AtomicInteger calls = new AtomicInteger();
          ChatClient.Builder builder = ChatClient.builder(flaky(calls, 1));
          context.getBean(ChatClientBuilderCustomizer.class).customize(builder);

          assertThat(builder.build().prompt("hi").call().content()).isEqualTo("ok");
          assertThat(calls).as("one 503, retried by the advisor").hasValue(2);
        });
  }

  @Test
  void aRetryPolicyOrRateLimitTheAdvisorNamesMustBeConfigured() {
    runner.withPropertyValues("breakwater.spring-ai.retry=lm", "breakwater.retry.policies.llm.max-retries=1")
        .run(context -> assertThat(context).getFailure().rootCause()
            .isInstanceOf(InvalidPropertiesException.class)
            .hasMessageContaining("breakwater.spring-ai.retry")
            .hasMessageContaining("Did you mean 'llm'?"));
    runner.withPropertyValues("breakwater.spring-ai.rate-limit=openai")
        .run(context -> assertThat(context).getFailure().rootCause()
            .isInstanceOf(InvalidPropertiesException.class)
            .hasMessageContaining("breakwater.spring-ai.rate-limit")
            .hasMessageContaining("add breakwater.limits.rate.openai.requests"));
  }

  @Test
  void theIntegrationIsOffWhenDisabledOrWithoutTheModule() {
    runner.withPropertyValues("breakwater.spring-ai.enabled=false")
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(BreakwaterAdvisor.class)
            .doesNotHaveBean(ChatClientBuilderCustomizer.class));
    runner.withClassLoader(new FilteredClassLoader(BreakwaterAdvisor.class))
        .withPropertyValues("breakwater.spring-ai.model=openai")
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(BreakwaterAdvisor.class));
  }

  @Test
  void anAdvisorBeanOfTheApplicationReplacesTheConfiguredOne() {
    BreakwaterAdvisor own = BreakwaterAdvisor.of("own");
    runner.withBean(BreakwaterAdvisor.class, () -> own)
        .run(context -> assertThat(context.getBean(BreakwaterAdvisor.class)).isSameAs(own));
  }

  @Test
  void toolCallbackBeansOfConfiguredToolsAreWrappedAndOthersAreLeftAsTheyAre() {
    runner.withPropertyValues("breakwater.tools[book_flight].side-effect=non-idempotent-write",
            "breakwater.tools[book_flight].idempotency=true", "breakwater.tools[book_flight].tenant-key=tenant")
        .withBean("booking", ToolCallback.class, () -> tool("book_flight"))
        .withBean("clock", ToolCallback.class, () -> tool("current_time"))
        .withBean("more", ToolCallbackProvider.class, () -> ToolCallbackProvider.from(tool("book_flight"),
            tool("current_time")))
        .run(context -> {
          assertThat(context).hasNotFailed();
          ToolCallback booking = context.getBean("booking", ToolCallback.class);
          assertThat(booking).isInstanceOf(BreakwaterToolCallback.class);
          assertThat(((BreakwaterToolCallback) booking).tool().descriptor())
              .isSameAs(context.getBean(ToolDescriptors.class).descriptor("book_flight"));
          assertThat(((BreakwaterToolCallback) booking).tool().descriptor().sideEffect())
              .isEqualTo(SideEffect.NON_IDEMPOTENT_WRITE);
          assertThat(context.getBean("clock", ToolCallback.class)).isNotInstanceOf(BreakwaterToolCallback.class);

          ToolCallback[] provided = context.getBean("more", ToolCallbackProvider.class).getToolCallbacks();
          assertThat(provided).hasSize(2);
          assertThat(provided[0]).isInstanceOf(BreakwaterToolCallback.class);
          assertThat(provided[1]).isNotInstanceOf(BreakwaterToolCallback.class);
          assertThat(((BreakwaterToolCallback) context.getBean("more", ToolCallbackProvider.class)
              .getToolCallbacks()[0]).tool()).as("one tool across calls: its timeout keeps learning")
              .isSameAs(((BreakwaterToolCallback) provided[0]).tool());
        });
  }

  @Test
  void aToolConfiguredUnderAMisspellingOfACallbacksNameFailsTheStart() {
    runner.withPropertyValues("breakwater.tools[book_fligt].side-effect=read-only")
        .withBean("booking", ToolCallback.class, () -> tool("book_flight"))
        .run(context -> assertThat(context).getFailure().rootCause()
            .isInstanceOf(InvalidPropertiesException.class)
            .hasMessageContaining("breakwater.tools.book_fligt")
            .hasMessageContaining("rename the configuration to breakwater.tools.book_flight"));
  }

  @Test
  void toolCallbacksAreLeftAsTheyAreWhenToolsAreOff() {
    runner.withPropertyValues("breakwater.spring-ai.tools=false",
            "breakwater.tools[book_flight].side-effect=read-only")
        .withBean("booking", ToolCallback.class, () -> tool("book_flight"))
        .run(context -> assertThat(context.getBean("booking", ToolCallback.class))
            .isNotInstanceOf(BreakwaterToolCallback.class));
  }
}
