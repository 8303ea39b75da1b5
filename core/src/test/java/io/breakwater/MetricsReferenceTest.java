package io.breakwater;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.limitedBy;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.throttledBy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.limit.ConcurrencyLimit;
import io.breakwater.limit.RateLimit;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * {@code docs/metrics.md} lists every meter Breakwater registers: a run of the limits, a breaker, a retry policy and a
 * tool with an Observation registry registers no meter the page lacks, and every meter the page gives to the limits
 * and to a tool's Observation is registered.
 */
class MetricsReferenceTest {

  private static final Path PAGE = Path.of("").toAbsolutePath().getParent().resolve("docs/metrics.md");
  private static final Pattern ROW = Pattern.compile("^\\| `(breakwater\\.[a-z._]+)` \\|.*\\| ([^|]+) \\|$");

  /** The page's meters, with their owner column. */
  private static final Map<String, String> documented = new LinkedHashMap<>();
  private static final SimpleMeterRegistry meters = new SimpleMeterRegistry();

  @BeforeAll
  static void readThePageAndRunEachOperator() throws IOException {
    for (String line : Files.readAllLines(PAGE, StandardCharsets.UTF_8)) {
      Matcher m = ROW.matcher(line);
      if (m.matches()) {
        documented.put(m.group(1), m.group(2).strip());
      }
    }
    VirtualTimeScheduler clock = VirtualTimeScheduler.create();

    ConcurrencyLimit concurrency = ConcurrencyLimit.builder("flights").fixed(1).maxQueue(1)
        .maxWait(Duration.ofSeconds(1)).scheduler(() -> clock).meterRegistry(meters).build();
    Sinks.One<String> held = Sinks.one();
    held.asMono().transformDeferred(limitedBy(concurrency)).subscribe();
    Mono.just("waits").transformDeferred(limitedBy(concurrency)).subscribe(v -> { }, e -> { });
    Mono.just("refused").transformDeferred(limitedBy(concurrency)).subscribe(v -> { }, e -> { });
    clock.advanceTimeBy(Duration.ofSeconds(1));
    held.tryEmitValue("done");

    RateLimit rate = RateLimit.builder("openai").requests(1, Duration.ofMinutes(1)).maxWait(Duration.ZERO)
        .scheduler(() -> clock).meterRegistry(meters).build();
    Mono.just("a").transformDeferred(throttledBy(rate)).subscribe(v -> { }, e -> { });
    Mono.just("b").transformDeferred(throttledBy(rate)).subscribe(v -> { }, e -> { });

    CircuitBreaker breaker = CircuitBreaker.builder("search").minimumCalls(1).scheduler(() -> clock)
        .meterRegistry(meters).build();
    Mono.error(new HttpStatusException(503)).transformDeferred(guardedBy(breaker)).subscribe(v -> { }, e -> { });

    RetryPolicy retry = RetryPolicy.builder().name("search").maxRetries(1).backoff(Backoff.fixed(Duration.ofMillis(1)))
        .budget(RetryBudget.unlimited()).meterRegistry(meters).build();
    Mono.error(new HttpStatusException(503)).transformDeferred(retryWithBudget(retry)).onErrorResume(e -> Mono.empty())
        .block(Duration.ofSeconds(5));

    ObservationRegistry observations = ObservationRegistry.create();
    observations.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
    Tool<String, String> tool = Tool.of(ToolDescriptor.builder("weather.forecast").sideEffect(SideEffect.READ_ONLY)
        .timeouts(CallTimeouts.fixed(Duration.ofSeconds(2))).meterRegistry(meters).observationRegistry(observations)
        .build(), city -> Mono.just("sunny in " + city), String.class);
    StepVerifier.create(tool.call("porto")).expectNext("sunny in porto").verifyComplete();
  }

  @Test
  void everyRegisteredMeterIsOnThePage() {
    Set<String> registered = new TreeSet<>();
    meters.getMeters().stream().map(Meter::getId).map(Meter.Id::getName).forEach(registered::add);
    assertThat(registered).as("the run registered meters").contains("breakwater.limit.refusals",
        "breakwater.breaker.calls", "breakwater.retry.retries", "breakwater.tool.calls", "breakwater.tool.call");
    assertThat(documented.keySet()).containsAll(registered);
  }

  @Test
  void everyLimitAndObservationMeterOnThePageIsRegistered() {
    Set<String> expected = new TreeSet<>();
    documented.forEach((name, owner) -> {
      if (owner.contains("ConcurrencyLimit") || owner.contains("RateLimit") || name.startsWith("breakwater.tool.call")
          && !name.equals("breakwater.tool.calls")) {
        expected.add(name);
      }
    });
    assertThat(expected).contains("breakwater.limit.permits", "breakwater.limit.available",
        "breakwater.tool.call", "breakwater.tool.call.active");
    for (String name : expected) {
      assertThat(meters.find(name).meters()).as(name).isNotEmpty();
    }
  }

  @Test
  void aLimitCountsItsWaitsAndItsRefusalsByReason() {
    assertThat(meters.get("breakwater.limit.waits").tags("limit", "flights", "kind", "concurrency").counter().count())
        .isEqualTo(1);
    assertThat(meters.get("breakwater.limit.refusals").tags("limit", "flights", "reason", "queue_full").counter()
        .count()).isEqualTo(1);
    assertThat(meters.get("breakwater.limit.refusals").tags("limit", "flights", "reason", "waited_too_long")
        .counter().count()).isEqualTo(1);
    assertThat(meters.get("breakwater.limit.refusals").tags("limit", "openai", "kind", "rate", "reason",
        "would_wait_too_long").counter().count()).isEqualTo(1);
    assertThat(meters.get("breakwater.limit.permits").tags("limit", "flights").gauge().value()).isEqualTo(1);
    assertThat(meters.get("breakwater.limit.permits.used").tags("limit", "flights").gauge().value()).isZero();
    assertThat(meters.get("breakwater.limit.available").tags("limit", "openai", "resource", "requests").gauge()
        .value()).isZero();
    assertThat(meters.get("breakwater.limit.available").tags("limit", "openai", "resource", "tokens").gauge()
        .value()).isNaN();
  }
}
