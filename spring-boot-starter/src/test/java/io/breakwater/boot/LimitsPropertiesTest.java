package io.breakwater.boot;

import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.throttledBy;
import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.TaskBudget;
import io.breakwater.boot.actuate.BreakwaterEndpoint;
import io.breakwater.internal.boot.BreakwaterActuatorAutoConfiguration;
import io.breakwater.internal.boot.BreakwaterAutoConfiguration;
import io.breakwater.internal.boot.InvalidPropertiesException;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.LimitExceededException;
import io.breakwater.limit.RateLimit;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/** breakwater.limits.* builds the limits, tools take them by name, and bad settings name the property. */
class LimitsPropertiesTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(BreakwaterAutoConfiguration.class));

  @Test
  void configuredLimitsAreBuiltOnceAndToolsTakeThemByName() {
    runner.withPropertyValues(
            "breakwater.limits.concurrency.flights.limit=10",
            "breakwater.limits.concurrency.flights.max-wait=2s",
            "breakwater.limits.concurrency.search.adaptive=true",
            "breakwater.limits.concurrency.search.initial=8",
            "breakwater.limits.rate.openai.requests=500",
            "breakwater.limits.rate.openai.tokens=200000",
            "breakwater.limits.rate.openai.provider-headers=open-ai",
            "breakwater.tools[flights.search].side-effect=read-only",
            "breakwater.tools[flights.search].concurrency-limit=flights",
            "breakwater.tools[flights.search].rate-limit=openai")
        .run(context -> {
          assertThat(context).hasNotFailed();
          Limits limits = context.getBean(Limits.class);
          ConcurrencyLimit flights = limits.concurrency("flights");
          assertThat(flights.name()).isEqualTo("flights");
          assertThat(flights.limit()).isEqualTo(10);
          assertThat(limits.concurrency("search").limit()).isEqualTo(8);
          RateLimit openai = limits.rate("openai");
          assertThat(openai.availableRequests()).isEqualTo(500);
          assertThat(openai.availableTokens()).isEqualTo(200_000);
          var tool = context.getBean(ToolDescriptors.class).descriptor("flights.search");
          assertThat(tool.concurrencyLimit()).isSameAs(flights);
          assertThat(tool.rateLimit()).isSameAs(openai);
          assertThat(limits.concurrencyNames()).containsExactlyInAnyOrder("flights", "search");
        });
  }

  @Test
  @SuppressWarnings("unchecked")
  void theActuatorEndpointListsEveryConfiguredLimitAndWhatItHoldsNow() {
    runner.withConfiguration(AutoConfigurations.of(BreakwaterActuatorAutoConfiguration.class))
        .withPropertyValues("management.endpoints.web.exposure.include=breakwater",
            "breakwater.limits.concurrency.flights.limit=10",
            "breakwater.limits.rate.openai.requests=500")
        .run(context -> {
          assertThat(context).hasNotFailed();
          Map<String, Object> limits = context.getBean(BreakwaterEndpoint.class).report().limits();
          assertThat((Map<String, Object>) limits.get("concurrency")).containsOnlyKeys("flights")
              .containsEntry("flights", Map.of("limit", 10, "inFlight", 0, "queued", 0));
          assertThat((Map<String, Object>) limits.get("rate")).containsOnlyKeys("openai")
              .containsEntry("openai", Map.of("availableRequests", 500L, "availableTokens", Long.MAX_VALUE,
                  "queued", 0));
        });
  }

  @Test
  void configuredLimitsReportToTheApplicationsMeterRegistry() {
    runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withPropertyValues("breakwater.limits.concurrency.flights.limit=10",
            "breakwater.limits.rate.openai.requests=500")
        .run(context -> {
          MeterRegistry meters = context.getBean(MeterRegistry.class);
          assertThat(meters.get("breakwater.limit.permits").tags("limit", "flights").gauge().value()).isEqualTo(10);
          assertThat(meters.get("breakwater.limit.available").tags("limit", "openai", "resource", "requests")
              .gauge().value()).isEqualTo(500);
        });
  }

  @Test
  void aLimitBeanWinsOverTheConfigurationOfItsName() {
    runner.withBean(ConcurrencyLimit.class, () -> ConcurrencyLimit.builder("flights").fixed(3).build())
        .withPropertyValues("breakwater.limits.concurrency.flights.limit=10")
        .run(context -> assertThat(context.getBean(Limits.class).concurrency("flights").limit()).isEqualTo(3));
  }

  @Test
  void aLimitThatIsNeitherFixedNorAdaptiveNamesTheProperty() {
    runner.withPropertyValues("breakwater.limits.concurrency.flights.max-wait=2s")
        .run(context -> {
          InvalidPropertiesException e = ValidationIT.refusal(context.getStartupFailure());
          assertThat(e.property()).isEqualTo("breakwater.limits.concurrency.flights");
          assertThat(e.reason()).contains("add limit (e.g. 10) or adaptive: true");
        });
  }

  @Test
  void aBadRateNamesTheProperty() {
    runner.withPropertyValues("breakwater.limits.rate.openai.requests=-5")
        .run(context -> assertThat(ValidationIT.refusal(context.getStartupFailure()).property())
            .isEqualTo("breakwater.limits.rate.openai"));
  }

  @Test
  void aToolNamingAnUnconfiguredLimitSaysWhichPropertyToAdd() {
    runner.withPropertyValues("breakwater.tools[flights.search].side-effect=read-only",
            "breakwater.tools[flights.search].rate-limit=openai")
        .run(context -> {
          InvalidPropertiesException e = ValidationIT.refusal(context.getStartupFailure());
          assertThat(e.property()).isEqualTo("breakwater.tools[flights.search].rate-limit");
          assertThat(e.reason()).contains("add breakwater.limits.rate.openai.requests");
        });
  }

  @Test
  void aSharedLimitWithoutRedisSaysWhatIsMissing() {
    runner.withPropertyValues("breakwater.limits.concurrency.flights.limit=10",
            "breakwater.limits.concurrency.flights.shared=true")
        .run(context -> assertThat(ValidationIT.refusal(context.getStartupFailure()).property())
            .isEqualTo("breakwater.limits.concurrency.flights.shared"));
  }

  @Test
  void unsetSettingsAreTheCoreDefaults() {
    runner.withPropertyValues("breakwater.limits.concurrency.flights.limit=10",
            "breakwater.limits.rate.openai.requests=60")
        .run(context -> {
          Limits limits = context.getBean(Limits.class);
          assertThat(limits.concurrency("flights").toString())
              .isEqualTo(ConcurrencyLimit.builder("flights").fixed(10).build().toString());
          assertThat(limits.rate("openai").toString()).isEqualTo(RateLimit.builder("openai")
              .requests(60, Duration.ofMinutes(1)).build().toString());
        });
  }

  /** Issue 36 (security 6): one task's share of each queue is a setting where the limits are configured. */
  @Test
  void maxQueuePerTaskCapsOneTasksShareOfEachLimitsQueue() {
    runner.withPropertyValues(
            "breakwater.limits.concurrency.flights.limit=1",
            "breakwater.limits.concurrency.flights.max-queue=10",
            "breakwater.limits.concurrency.flights.max-queue-per-task=1",
            "breakwater.limits.rate.openai.requests=1",
            "breakwater.limits.rate.openai.max-queue=10",
            "breakwater.limits.rate.openai.max-queue-per-task=1",
            "breakwater.limits.rate.openai.max-wait=5m")
        .run(context -> {
          assertThat(context).hasNotFailed();
          Limits limits = context.getBean(Limits.class);
          Sinks.Empty<Void> holder = Sinks.empty();
          holder.asMono().transformDeferred(limitedBy(limits.concurrency("flights"))).subscribe();
          assertThat(Mono.just("first").transformDeferred(throttledBy(limits.rate("openai")))
              .block(Duration.ofSeconds(5))).as("the rate limit's only request of the minute").isEqualTo("first");

          // the second call of one task is refused with 9 places left in the queue (5 by default)
          StepVerifier.create(twoCallsOfOneTask(limitedBy(limits.concurrency("flights"))))
              .assertNext(refusal -> assertThat(refusal).contains("already has 1 calls waiting"))
              .thenCancel().verify(Duration.ofSeconds(5));
          StepVerifier.create(twoCallsOfOneTask(throttledBy(limits.rate("openai"))))
              .assertNext(refusal -> assertThat(refusal).contains("already has 1 calls waiting"))
              .thenCancel().verify(Duration.ofSeconds(5));
          holder.tryEmitEmpty();
        });
  }

  /** Two calls of one agent task through {@code limit}: a refusal's reason and message, or the call's value. */
  private static Flux<String> twoCallsOfOneTask(Function<Publisher<String>, Publisher<String>> limit) {
    return Flux.range(0, 2)
        .flatMap(i -> Mono.just("call " + i).transformDeferred(limit)
            .onErrorResume(LimitExceededException.class, e -> Mono.just(e.reason() + ": " + e.getMessage())))
        .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofHours(1)).build()));
  }

  @Test
  void aMaxQueuePerTaskOverMaxQueueNamesTheLimit() {
    runner.withPropertyValues("breakwater.limits.rate.openai.requests=60",
            "breakwater.limits.rate.openai.max-queue=4",
            "breakwater.limits.rate.openai.max-queue-per-task=5")
        .run(context -> {
          InvalidPropertiesException e = ValidationIT.refusal(context.getStartupFailure());
          assertThat(e.property()).isEqualTo("breakwater.limits.rate.openai");
          assertThat(e.reason()).contains("maxQueuePerTask is 5: give 1 to maxQueue (4)");
        });
  }

  @Test
  void theGeneratedMetadataDescribesTheLimits() throws Exception {
    String metadata;
    try (var in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("the configuration processor's metadata").isNotNull();
      metadata = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
    assertThat(metadata).contains("\"name\": \"breakwater.limits.concurrency\"",
        "\"description\": \"concurrency limits, by name\"", "\"name\": \"breakwater.limits.rate\"",
        "\"description\": \"rate limits, by name\"");
  }
}
