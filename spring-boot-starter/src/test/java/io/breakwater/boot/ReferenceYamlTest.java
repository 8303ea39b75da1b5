package io.breakwater.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.breaker.CircuitBreakerRegistry;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.internal.boot.BreakwaterAutoConfiguration;
import io.breakwater.retry.RetryPolicy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

/** The reference application.yml of docs/spring-boot.md binds (every property exists) and states the defaults. */
class ReferenceYamlTest {

  private static String referenceYaml() throws Exception {
    String page = Files.readString(Path.of("../docs/spring-boot.md"), StandardCharsets.UTF_8);
    int marker = page.indexOf("<!-- reference-yml -->");
    assertThat(marker).as("the reference block's marker").isPositive();
    int start = page.indexOf("```yaml\n", marker) + "```yaml\n".length();
    return page.substring(start, page.indexOf("```", start));
  }

  @Test
  void theReferenceYamlBindsAndItsValuesAreTheCoreDefaults() throws Exception {
    List<PropertySource<?>> sources = new YamlPropertySourceLoader().load("reference",
        new ByteArrayResource(referenceYaml().getBytes(StandardCharsets.UTF_8)));
    new ApplicationContextRunner()
        .withInitializer(context -> sources.forEach(s -> context.getEnvironment().getPropertySources().addFirst(s)))
        .withConfiguration(AutoConfigurations.of(BreakwaterAutoConfiguration.class))
        .run(context -> {
          assertThat(context).hasNotFailed();
          CircuitBreaker unlisted = context.getBean(CircuitBreakerRegistry.class).breaker("any.tool");
          CircuitBreaker core = CircuitBreaker.ofDefaults("any.tool");
          assertThat(unlisted.failureRateThreshold()).isEqualTo(core.failureRateThreshold());
          assertThat(unlisted.minimumCalls()).isEqualTo(core.minimumCalls());
          assertThat(unlisted.slidingWindow()).isEqualTo(core.slidingWindow());
          assertThat(unlisted.openDuration()).isEqualTo(core.openDuration());
          assertThat(unlisted.maxOpenDuration()).isEqualTo(core.maxOpenDuration());
          assertThat(unlisted.rampUp()).isEqualTo(core.rampUp());
          assertThat(unlisted.slowCallThreshold()).isEqualTo(core.slowCallThreshold());
          assertThat(unlisted.slowCallRateThreshold()).isEqualTo(core.slowCallRateThreshold());

          RetryPolicy policy = context.getBean(RetryPolicies.class).policy("any");
          RetryPolicy defaults = RetryPolicy.ofDefaults();
          assertThat(policy.maxRetries()).isEqualTo(defaults.maxRetries());
          assertThat(policy.backoff()).hasToString(defaults.backoff().toString());
          assertThat(policy.timeoutBase()).isEqualTo(defaults.timeoutBase());
          assertThat(policy.rateLimitedBase()).isEqualTo(defaults.rateLimitedBase());
          assertThat(policy.retryAfterCap()).isEqualTo(defaults.retryAfterCap());
          assertThat(policy.minAttemptTime()).isEqualTo(defaults.minAttemptTime());

          IdempotencyPolicy idempotency = context.getBean(IdempotencyPolicy.class);
          assertThat(idempotency.ttl()).isEqualTo(IdempotencyPolicy.DEFAULT_TTL);
          assertThat(idempotency.lease()).isEqualTo(IdempotencyPolicy.DEFAULT_LEASE);
          assertThat(idempotency.maxResultBytes()).isEqualTo(IdempotencyPolicy.DEFAULT_MAX_RESULT_BYTES);

          DeadlineSpec spec = context.getBean(DeadlineDefaults.class).spec(Duration.ofSeconds(1));
          assertThat(spec.perCallCap()).isEqualTo(DeadlineSpec.DEFAULT_PER_CALL_CAP);
          assertThat(spec.idleFraction()).isEqualTo(DeadlineSpec.DEFAULT_IDLE_FRACTION);
          assertThat(context.getBean(ToolDescriptors.class).names()).containsExactly("flights.search");
        });
  }
}
