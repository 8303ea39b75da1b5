package io.breakwater.issues;

import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryPolicy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/**
 * Incident 7: the agent step, the planner tool and the HTTP search tool each retried 3 times, so one failing search
 * became 4 × 4 × 4 = 64 requests. With Breakwater an exhausted inner retry passes through the outer ones, and the
 * task's retry budget caps all of them together.
 */
class NestedRetriesMultipliedIncidentTest {

  static final Duration VERIFY = Duration.ofSeconds(5);

  final AtomicInteger requests = new AtomicInteger();

  Mono<String> http(String q) {
    return Mono.defer(() -> {
      requests.incrementAndGet();
      return Mono.error(new HttpStatusException(503));
    });
  }

  static ToolDescriptor layer(String name) {
    return ToolDescriptor.builder(name).sideEffect(SideEffect.READ_ONLY)
        .timeouts(CallTimeouts.fixed(Duration.ofSeconds(5)))
        .retry(RetryPolicy.builder().name(name).maxRetries(3).backoff(Backoff.fixed(Duration.ofMillis(100)))
            .budget(RetryBudget.unlimited()).build())
        .meterRegistry(new SimpleMeterRegistry()).eventLog(e -> { })
        .build();
  }

  @Test
  void threePlainRetryLayersMakeSixtyFourRequests() {
    Retry three = Retry.fixedDelay(3, Duration.ofMillis(100));
    StepVerifier.withVirtualTime(() -> http("q").retryWhen(three).retryWhen(three).retryWhen(three))
        .thenAwait(Duration.ofMinutes(1)).expectError().verify(VERIFY);
    assertThat(requests).hasValue(64);
  }

  @Test
  void nestedToolsMakeOneLayerOfRetriesAndTheTaskBudgetCapsThem() {
    Tool<String, String> search = Tool.of(layer("search.http"), this::http, String.class);
    Tool<String, String> planner = Tool.of(layer("planner.plan"), search::call, String.class);
    Tool<String, String> step = Tool.of(layer("agent.step"), planner::call, String.class);

    StepVerifier.withVirtualTime(() -> step.call("q"))
        .thenAwait(Duration.ofMinutes(1))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(RetryExhaustedException.class))
        .verify(VERIFY);
    assertThat(requests).hasValue(4);

    requests.set(0);
    StepVerifier.withVirtualTime(() -> step.call("q")
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofSeconds(30)).retries(2).build())))
        .thenAwait(Duration.ofMinutes(1))
        .expectError(RetryExhaustedException.class)
        .verify(VERIFY);
    assertThat(requests).hasValue(3);
  }
}
