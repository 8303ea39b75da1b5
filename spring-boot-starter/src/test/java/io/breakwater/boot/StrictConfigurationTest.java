package io.breakwater.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.ToolDescriptor;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.internal.boot.BreakwaterAutoConfiguration;
import io.breakwater.internal.boot.InvalidPropertiesException;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * Every name under {@code breakwater.*} must resolve, or the start-up fails with Boot's failure report naming the
 * property, the value, the names that exist and the close match of a misspelling.
 */
class StrictConfigurationTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(BreakwaterAutoConfiguration.class))
      .withPropertyValues("breakwater.tools[weather.forecast].side-effect=read-only");

  /**
   * What Boot prints for {@code failure}: the analysis of the first analyzer, in Boot's order, that has one, among the
   * analyzers of {@code spring.factories} that need no constructor arguments (the starter's and Boot's analyzer of
   * unbound properties among them).
   */
  static FailureAnalysis report(@Nullable Throwable failure) {
    assertThat(failure).as("the start-up failed").isNotNull();
    List<FailureAnalyzer> analyzers = new ArrayList<>(SpringFactoriesLoader.forDefaultResourceLocation()
        .load(FailureAnalyzer.class, SpringFactoriesLoader.ArgumentResolver.none(),
            (type, name, skipped) -> { }));
    assertThat(analyzers).as("Boot's own report of unbound properties is among them")
        .anyMatch(a -> a.getClass().getSimpleName().equals("UnboundConfigurationPropertyFailureAnalyzer"));
    AnnotationAwareOrderComparator.sort(analyzers);
    for (FailureAnalyzer analyzer : analyzers) {
      FailureAnalysis analysis = analyzer.analyze(failure);
      if (analysis != null) {
        return analysis;
      }
    }
    throw new AssertionError("no failure analysis for " + failure);
  }

  @Test
  void aToolRetryNamingNoPolicyFailsNamingThePoliciesThatExist() {
    runner.withPropertyValues("breakwater.retry.policies.weather.max-retries=2",
            "breakwater.retry.policies.flights.max-retries=1",
            "breakwater.tools[weather.forecast].retry=nosuchpolicy")
        .run(context -> {
          FailureAnalysis report = report(context.getStartupFailure());
          assertThat(report.getDescription()).contains("breakwater.tools[weather.forecast].retry")
              .contains("'nosuchpolicy'").contains("no configured retry policy").contains("[flights, weather]")
              .doesNotContain("Did you mean");
          assertThat(report.getAction()).contains("Change 'breakwater.tools[weather.forecast].retry'");
        });
  }

  @Test
  void aToolRetryNamingAMisspeltPolicyGetsTheCloseMatch() {
    runner.withPropertyValues("breakwater.retry.policies.wether.max-retries=2",
            "breakwater.tools[weather.forecast].retry=weather")
        .run(context -> {
          InvalidPropertiesException e = ValidationIT.refusal(context.getStartupFailure());
          assertThat(e.property()).isEqualTo("breakwater.tools[weather.forecast].retry");
          assertThat(e.reason()).contains("is 'weather'").contains("Did you mean 'wether'?");
        });
  }

  @Test
  void aMisspeltBreakerInstanceFailsNamingTheTool() {
    runner.withPropertyValues("breakwater.breakers.instances[wether.forecast].failure-rate-threshold=0.3")
        .run(context -> {
          FailureAnalysis report = report(context.getStartupFailure());
          assertThat(report.getDescription()).contains("breakwater.breakers.instances[wether.forecast]")
              .contains("configures nothing").contains("Did you mean 'weather.forecast'?")
              .contains("breakwater.breakers.instances[weather.forecast]");
        });
  }

  @Test
  void aMisspeltFamilyAndAMisspeltPolicyFail() {
    runner.withPropertyValues("breakwater.breakers.families.wether.open-duration=45s")
        .run(context -> assertThat(ValidationIT.refusal(context.getStartupFailure()).reason())
            .contains("Did you mean 'weather'?"));
    runner.withPropertyValues("breakwater.retry.policies[weather.forcast].max-retries=1")
        .run(context -> assertThat(ValidationIT.refusal(context.getStartupFailure()).property())
            .isEqualTo("breakwater.retry.policies[weather.forcast]"));
  }

  @Test
  void aPolicyBudgetNamingNoBudgetFails() {
    runner.withPropertyValues("breakwater.retry.budgets.travel.ratio=0.1",
            "breakwater.retry.policies.weather.budget=travle")
        .run(context -> {
          InvalidPropertiesException e = ValidationIT.refusal(context.getStartupFailure());
          assertThat(e.property()).isEqualTo("breakwater.retry.policies.weather.budget");
          assertThat(e.reason()).contains("Did you mean 'travel'?");
        });
  }

  @Test
  void namesNoToolUsesButFarFromAnyAreKeptForCode() {
    runner.withPropertyValues("breakwater.breakers.instances.payments.open-duration=10s",
            "breakwater.retry.policies.flights.max-retries=1",
            "breakwater.retry.policies.flights.budget=travel",
            "breakwater.retry.budgets.travel.ratio=0.1",
            "breakwater.limits.concurrency.search.limit=4",
            "breakwater.tools[weather.forecast].retry=flights")
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(ToolDescriptors.class).descriptor("weather.forecast").retry().name())
              .isEqualTo("flights");
        });
  }

  @Test
  void aToolDescriptorBeanCountsAsATool() {
    runner.withBean(ToolDescriptor.class, () -> ToolDescriptor.builder("payments.refund")
            .sideEffect(SideEffect.IDEMPOTENT_WRITE).build())
        .withPropertyValues("breakwater.breakers.instances[payments.refund].open-duration=10s",
            "breakwater.breakers.families.payments.open-duration=10s")
        .run(context -> assertThat(context).hasNotFailed());
  }

  @Test
  void aToolNamingAnUnconfiguredLimitNamesTheLimitsThatExist() {
    runner.withPropertyValues("breakwater.limits.rate.openai.requests=60",
            "breakwater.tools[weather.forecast].rate-limit=opneai")
        .run(context -> {
          InvalidPropertiesException e = ValidationIT.refusal(context.getStartupFailure());
          assertThat(e.property()).isEqualTo("breakwater.tools[weather.forecast].rate-limit");
          assertThat(e.reason()).contains("Did you mean 'openai'?").contains("Configured: [openai]");
        });
  }

  @Test
  void aNegativeDurationIsReportedAsTheUserWroteIt() {
    runner.withPropertyValues("breakwater.breakers.defaults.open-duration=-5s")
        .run(context -> {
          FailureAnalysis report = report(context.getStartupFailure());
          assertThat(report.getDescription()).contains("breakwater.breakers.defaults").contains("-5s")
              .doesNotContain("PT-5S");
        });
  }

  /** A bean that asks for a tool while the application starts. */
  @Configuration(proxyBeanMethods = false)
  static class Assistant {
    @Bean
    String assistant(ToolDescriptors tools) {
      return tools.descriptor("wether.forecast").name();
    }
  }

  @Test
  void aBeanAskingForAnUnknownToolGetsBootsReportWithTheCloseMatch() {
    runner.withUserConfiguration(Assistant.class)
        .run(context -> {
          FailureAnalysis report = report(context.getStartupFailure());
          assertThat(report.getDescription()).contains("the tool 'wether.forecast'").contains("[weather.forecast]");
          assertThat(report.getAction()).contains("'wether.forecast' is close to the configured 'weather.forecast'")
              .contains("breakwater.tools[wether.forecast].side-effect");
        });
  }

  @Test
  void aDottedNameWithoutBracketsGetsTheBracketedProperty() {
    runner.withPropertyValues("breakwater.tools.flights.search.side-effect=read-only")
        .run(context -> {
          FailureAnalysis report = report(context.getStartupFailure());
          assertThat(report.getDescription()).contains("breakwater.tools.flights.search.side-effect")
              .doesNotContain("left unbound");
          assertThat(report.getAction()).contains("breakwater.tools[flights.search].side-effect")
              .contains("\"[flights.search]\":");
        });
  }

  @Test
  void aMisspeltSettingGetsItsCloseMatch() {
    runner.withPropertyValues("breakwater.tools[weather.forecast].sid-effect=read-only")
        .run(context -> assertThat(report(context.getStartupFailure()).getAction())
            .contains("Did you mean 'side-effect' instead of 'sid-effect'?"));
  }
}
