package io.breakwater.internal.boot;

import static io.breakwater.internal.boot.FromProperties.checked;
import static io.breakwater.internal.boot.FromProperties.ifSet;

import io.breakwater.boot.BreakwaterProperties;
import io.breakwater.boot.Limits;
import io.breakwater.boot.RetryPolicies;
import io.breakwater.boot.ToolDescriptors;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.springai.BreakwaterAdvisor;
import io.breakwater.stream.StreamTimeouts;
import io.breakwater.stream.llm.LlmGuard;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.ChatClientBuilderCustomizer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * The Spring AI integration, when {@code breakwater-spring-ai} and Spring AI's {@code ChatClient} are on the class
 * path: a {@link BreakwaterAdvisor} built from {@code breakwater.spring-ai.*} (its breaker from the application's
 * registry, its retry policy and rate limit by name), added to every {@code ChatClient.Builder} Boot builds, and
 * each tool callback bean whose tool is configured under {@code breakwater.tools} wrapped as that Breakwater tool.
 * A {@code BreakwaterAdvisor} bean of the application's replaces the configured one.
 */
@AutoConfiguration(after = BreakwaterAutoConfiguration.class)
@ConditionalOnClass({BreakwaterAdvisor.class, ChatClient.class})
@ConditionalOnProperty(prefix = "breakwater.spring-ai", name = "enabled", havingValue = "true", matchIfMissing = true)
public class BreakwaterSpringAiAutoConfiguration {

  /** The breaker of the model {@code model} in the application's registry. */
  static String breakerName(String model) {
    return "llm:" + model;
  }

  /**
   * The advisor of {@code breakwater.spring-ai}. It asks for the tool descriptors so that every name under
   * {@code breakwater} has been checked ({@link ConfiguredNames}) before one is used here.
   */
  @Bean
  @ConditionalOnMissingBean
  BreakwaterAdvisor breakwaterAdvisor(BreakwaterProperties properties, ToolDescriptors namesChecked,
      CircuitBreakerRegistry breakers, RetryPolicies policies, ObjectProvider<Limits> limits,
      ObjectProvider<MeterRegistry> meters) {
    BreakwaterProperties.SpringAi s = properties.springAi();
    return checked("breakwater.spring-ai", () -> {
      LlmGuard.Builder guard = LlmGuard.builder(s.model()).breaker(breakers.breaker(breakerName(s.model())));
      ifSet(s.deadline(), guard::deadline);
      if (s.firstToken() != null || s.idle() != null) {
        StreamTimeouts.Builder timeouts = StreamTimeouts.builder()
            .meterRegistry(BreakwaterAutoConfiguration.meters(meters));
        if (s.firstToken() != null) {
          timeouts.firstItem(s.firstToken());
        } else {
          timeouts.firstItemFromDeadline();
        }
        if (s.idle() != null) {
          timeouts.idle(s.idle());
        } else {
          timeouts.idleFromDeadline();
        }
        guard.timeouts(timeouts.build());
      }
      ifSet(s.callTimeout(), guard::callTimeout);
      ifSet(s.retry(), name -> guard.retry(policies.policy(name)));
      ifSet(s.rateLimit(), name -> guard.rateLimit(limits.getObject().rate(name)));
      return BreakwaterAdvisor.builder(guard.build())
          .order(s.order() == BreakwaterProperties.AdvisorOrder.WHOLE_TURN
              ? BreakwaterAdvisor.WHOLE_TURN : BreakwaterAdvisor.EACH_MODEL_ROUND)
          .build();
    });
  }

  /** Adds the advisor to every {@code ChatClient.Builder} that Spring AI's Boot auto-configuration builds. */
  @Bean
  ChatClientBuilderCustomizer breakwaterChatClientCustomizer(BreakwaterAdvisor advisor) {
    return builder -> builder.defaultAdvisors(advisor);
  }

  /** Wraps the tool callback beans whose tools are configured under {@code breakwater.tools}. */
  @Bean
  @ConditionalOnProperty(prefix = "breakwater.spring-ai", name = "tools", havingValue = "true", matchIfMissing = true)
  static BeanPostProcessor breakwaterToolCallbacks(ObjectProvider<ToolDescriptors> descriptors) {
    return new ToolCallbackWrapping(descriptors);
  }
}
