package io.breakwater.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.breakwater.boot.app.StarterTestApplication;
import io.breakwater.internal.boot.InvalidPropertiesException;
import io.breakwater.internal.boot.InvalidPropertiesFailureAnalyzer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/** Bad settings stop a real WebFlux application at start-up, and the error names the property and what to change. */
@ExtendWith(OutputCaptureExtension.class)
class ValidationIT {

  private static Throwable startWith(String... properties) {
    List<String> all = new ArrayList<>(List.of("server.port=0", "spring.main.banner-mode=off",
        "breakwater.tools[weather.forecast].side-effect=read-only"));
    all.addAll(List.of(properties));
    return catchThrowable(() -> {
      try (ConfigurableApplicationContext context = new SpringApplicationBuilder(StarterTestApplication.class)
          .web(WebApplicationType.REACTIVE).properties(all.toArray(String[]::new)).run()) {
        context.getBean(ToolDescriptors.class);
      }
    });
  }

  /** The InvalidPropertiesException in {@code failure}'s causes; fails the test without one. */
  static InvalidPropertiesException refusal(Throwable failure) {
    Throwable t = failure;
    while (t != null && !(t instanceof InvalidPropertiesException)) {
      t = t.getCause();
    }
    assertThat(t).as("an InvalidPropertiesException in %s", failure).isNotNull();
    return (InvalidPropertiesException) t;
  }

  @Test
  void aBreakerSettingOutOfRangeNamesTheInstanceAndTheFix() {
    InvalidPropertiesException e = refusal(startWith(
        "breakwater.breakers.instances[weather.forecast].failure-rate-threshold=1.5"));
    assertThat(e.property()).isEqualTo("breakwater.breakers.instances[weather.forecast]");
    assertThat(e.getMessage()).contains("failureRateThreshold of 'weather.forecast' is 1.5")
        .contains("give a fraction above 0 and at most 1");
  }

  @Test
  void badDefaultsAreRefusedEvenWhenNoBreakerUsesThemYet() {
    InvalidPropertiesException e = refusal(startWith("breakwater.breakers.defaults.minimum-calls=0"));
    assertThat(e.property()).isEqualTo("breakwater.breakers.defaults");
    assertThat(e.reason()).contains("give at least 1");
  }

  @Test
  void aNegativeRetryCountNamesThePolicy() {
    InvalidPropertiesException e = refusal(startWith("breakwater.retry.policies.weather.max-retries=-1"));
    assertThat(e.getMessage()).isEqualTo("breakwater.retry.policies.weather: maxRetries is -1: give 0 (no retries) "
        + "or more (e.g. 3)");
  }

  @Test
  void aBackoffCapBelowItsBaseNamesThePolicy() {
    InvalidPropertiesException e = refusal(startWith("breakwater.retry.policies.weather.backoff.base=5s",
        "breakwater.retry.policies.weather.backoff.cap=1s"));
    assertThat(e.property()).isEqualTo("breakwater.retry.policies.weather");
    assertThat(e.reason()).contains("give a cap at least as long as the base");
  }

  @Test
  void aBudgetRatioOutOfRangeNamesTheBudget() {
    InvalidPropertiesException e = refusal(startWith("breakwater.retry.budgets.weather.ratio=-0.5"));
    assertThat(e.property()).isEqualTo("breakwater.retry.budgets.weather");
  }

  @Test
  void anIdempotencyTtlShorterThanItsLeaseIsRefused() {
    InvalidPropertiesException e = refusal(startWith("breakwater.idempotency.ttl=1m",
        "breakwater.idempotency.lease=5m"));
    assertThat(e.property()).isEqualTo("breakwater.idempotency");
    assertThat(e.reason()).contains("raise ttl");
  }

  @Test
  void aKeySecretThatIsNotBase64IsRefusedWithoutRepeatingIt() {
    InvalidPropertiesException e = refusal(startWith("breakwater.idempotency.key-secret=not base64: s3cr3t!"));
    assertThat(e.property()).isEqualTo("breakwater.idempotency.key-secret");
    assertThat(e.reason()).contains("is not base64").contains("openssl rand -base64 32");
    assertThat(e.getCause()).as("the decoder's own error, which quotes a character, is dropped").hasNoCause();
    assertThat(e.getMessage()).doesNotContain("s3cr3t");
  }

  @Test
  void aKeySecretShorterThan32BytesIsRefused() {
    InvalidPropertiesException e = refusal(startWith("breakwater.idempotency.key-secret=c2hvcnQ="));
    assertThat(e.property()).isEqualTo("breakwater.idempotency.key-secret");
    assertThat(e.reason()).isEqualTo("is 5 bytes: give 32 or more random bytes in base64, e.g. the output of "
        + "`openssl rand -base64 32`");
  }

  @Test
  void anInMemoryStoreBoundUnder1MiBNamesTheProperty() {
    InvalidPropertiesException e = refusal(startWith("breakwater.idempotency.max-bytes=100KB"));
    assertThat(e.property()).isEqualTo("breakwater.idempotency.max-bytes");
    assertThat(e.reason()).contains("give at least 1 MiB");
  }

  @Test
  void aToolWithoutASideEffectNamesTheTool() {
    InvalidPropertiesException e = refusal(startWith("breakwater.tools[flights.book].family=flights"));
    assertThat(e.property()).isEqualTo("breakwater.tools[flights.book]");
    assertThat(e.reason()).contains("has no side effect declared");
  }

  @Test
  void aNonIdempotentToolRetriedWithoutIdempotencyIsRefused() {
    InvalidPropertiesException e = refusal(startWith(
        "breakwater.tools[payments.refund].side-effect=non-idempotent-write"));
    assertThat(e.reason()).contains("retried without idempotency");
  }

  @Test
  void redisStoresWithoutARedissonClientAreRefused() {
    assertThat(refusal(startWith("breakwater.idempotency.store=redis")).property())
        .isEqualTo("breakwater.idempotency.store");
    assertThat(refusal(startWith("breakwater.breakers.state-store=redis")).property())
        .isEqualTo("breakwater.breakers.state-store");
    assertThat(refusal(startWith("breakwater.retry.budgets.weather.shared=true")).property())
        .isEqualTo("breakwater.retry.budgets.weather.shared");
  }

  @Test
  void aToolNameWithDotsOutsideBracketsIsAnUnknownProperty() {
    Throwable failure = startWith("breakwater.tools.flights.search.side-effect=read-only");
    Throwable t = failure;
    while (t != null && !(t instanceof UnboundConfigurationPropertiesException)) {
      t = t.getCause();
    }
    assertThat(t).as("unbound properties in %s", failure).isNotNull();
    assertThat(t.getMessage()).contains("breakwater.tools.flights.search.side-effect");
  }

  @Test
  void aValueOfTheWrongTypeIsRefusedByBoot() {
    Throwable failure = startWith("breakwater.breakers.defaults.open-duration=soon");
    assertThat(failure).hasStackTraceContaining("breakwater.breakers.defaults.open-duration");
  }

  /** A controller asking for a tool nothing configures: Boot's report, with the close match, not a stack trace. */
  @Test
  void anUnknownToolAskedForAtStartUpIsBootsFailureReport(CapturedOutput output) {
    Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(StarterTestApplication.class)
        .web(WebApplicationType.REACTIVE).properties("server.port=0", "spring.main.banner-mode=off",
            "breakwater.tools[wether.forecast].side-effect=read-only").run().close());
    assertThat(failure).isNotNull();
    assertThat(output.getOut() + output.getErr()).contains("APPLICATION FAILED TO START")
        .contains("A bean asked Breakwater for the tool 'weather.forecast', which is not configured")
        .contains("'weather.forecast' is close to the configured 'wether.forecast': correct whichever is misspelt");
  }

  @Test
  void theFailureAnalysisSaysWhichPropertyToChange() {
    InvalidPropertiesException e = refusal(startWith("breakwater.retry.policies.weather.max-retries=-1"));
    FailureAnalysis analysis = new InvalidPropertiesFailureAnalyzer().analyze(e);
    assertThat(analysis.getDescription()).contains("breakwater.retry.policies.weather").contains("maxRetries is -1");
    assertThat(analysis.getAction()).contains("Change 'breakwater.retry.policies.weather'");
  }
}
