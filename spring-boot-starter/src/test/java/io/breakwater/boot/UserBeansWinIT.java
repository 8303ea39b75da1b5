package io.breakwater.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.ToolDescriptor;
import io.breakwater.boot.actuate.BreakwaterEndpoint;
import io.breakwater.boot.app.StarterTestApplication;
import io.breakwater.boot.web.DeadlineWebFilter;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.RetryPolicy;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Beans the application defines win over the starter's, on a real Netty server. */
@SpringBootTest(classes = {StarterTestApplication.class, UserBeansWinIT.UserBeans.class},
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "breakwater.tools[weather.forecast].side-effect=read-only",
        "breakwater.tools[weather.forecast].retry=weather",
        "breakwater.retry.policies.weather.max-retries=5",
        "breakwater.tools[mail.send].side-effect=idempotent-write",
        "management.endpoints.web.exposure.include=breakwater"})
@AutoConfigureWebTestClient(timeout = "PT60S")
class UserBeansWinIT {

  @TestConfiguration(proxyBeanMethods = false)
  static class UserBeans {
    static final CircuitBreakerRegistry REGISTRY = CircuitBreakerRegistry.builder()
        .breakers(name -> CircuitBreaker.builder(name).minimumCalls(99).build()).build();
    static final IdempotencyStore STORE = IdempotencyStore.inMemory();

    @Bean
    CircuitBreakerRegistry myBreakers() {
      return REGISTRY;
    }

    @Bean
    IdempotencyStore myStore() {
      return STORE;
    }

    @Bean
    RetryPolicy weatherPolicy() {
      return RetryPolicy.builder().name("weather").maxRetries(0).build();
    }

    @Bean
    ToolDescriptor mailSend() {
      return ToolDescriptor.builder("mail.send").sideEffect(SideEffect.READ_ONLY).build();
    }

    @Bean
    DeadlineWebFilter myDeadlineFilter(DeadlineDefaults deadlines) {
      return new DeadlineWebFilter("X-Deadline", Duration.ofSeconds(10), null, deadlines);
    }

    @Bean
    BreakwaterEndpoint.LimitsReport myLimits() {
      return () -> Map.of("llm", Map.of("permits", 4));
    }
  }

  @Autowired
  ApplicationContext context;
  @Autowired
  WebTestClient web;

  @Test
  void theApplicationsRegistryStoreAndFilterAreTheOnlyOnes() {
    assertThat(context.getBeansOfType(CircuitBreakerRegistry.class).values()).containsExactly(UserBeans.REGISTRY);
    assertThat(context.getBeansOfType(IdempotencyStore.class).values()).containsExactly(UserBeans.STORE);
    assertThat(context.getBean(IdempotencyPolicy.class).store()).as("the starter's policy uses the user's store")
        .isSameAs(UserBeans.STORE);
    assertThat(context.getBeansOfType(DeadlineWebFilter.class)).containsOnlyKeys("myDeadlineFilter");
    assertThat(context.getBean(ToolDescriptors.class).descriptor("weather.forecast").breakers())
        .isSameAs(UserBeans.REGISTRY);
  }

  @Test
  void aRetryPolicyBeanWinsOverTheConfiguredPolicyOfItsName() {
    RetryPolicy weather = context.getBean(RetryPolicies.class).policy("weather");
    assertThat(weather.maxRetries()).isZero();
    assertThat(context.getBean(ToolDescriptors.class).descriptor("weather.forecast").retry()).isSameAs(weather);
  }

  @Test
  void aToolDescriptorBeanWinsOverTheConfiguredToolOfItsName() {
    assertThat(context.getBean(ToolDescriptors.class).descriptor("mail.send").sideEffect())
        .isEqualTo(SideEffect.READ_ONLY);
  }

  @Test
  void theEndpointListsTheApplicationsBreakersAndLimits() {
    UserBeans.REGISTRY.breaker("mine");
    web.get().uri("/actuator/breakwater").exchange()
        .expectStatus().isOk()
        .expectBody()
        .jsonPath("$.breakers.mine.state").isEqualTo("CLOSED")
        .jsonPath("$.limits.llm.permits").isEqualTo(4);
  }
}
