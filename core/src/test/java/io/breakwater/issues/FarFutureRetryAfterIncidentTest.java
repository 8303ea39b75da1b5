package io.breakwater.issues;

import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.CallTimeouts;
import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryPolicy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * Review defects 4 and 5: a {@code Retry-After} far in the future overflowed when it became nanoseconds. In
 * {@code retryWithBudget} the retry fired at once and virtual time ran 292 years backwards; in the agent,
 * {@code Tool.outcome()} failed with an {@code ArithmeticException} although it promises never to fail with the
 * tool's failure. Both now go through one saturating parser and wait at most {@code retryAfterCap}.
 */
class FarFutureRetryAfterIncidentTest {

  static HttpStatusException rateLimited(String retryAfter) {
    return new HttpStatusException(429, Map.of("Retry-After", List.of(retryAfter)));
  }

  @Test
  void aRetryAfterDateCenturiesAheadWaitsTheCapAndTimeNeverRunsBackwards() {
    List<Long> startedAt = new CopyOnWriteArrayList<>();
    AtomicInteger attempts = new AtomicInteger();
    StepVerifier.withVirtualTime(() -> Mono.defer(() -> {
              startedAt.add(Schedulers.parallel().now(TimeUnit.MILLISECONDS));
              return attempts.getAndIncrement() == 0
                  ? Mono.<String>error(rateLimited("Thu, 1 Jan 2263 00:00:00 GMT"))
                  : Mono.just("ok");
            })
            .transformDeferred(retryWithBudget(RetryPolicy.builder().name("far-future")
                .budget(RetryBudget.unlimited()).build())))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(59_999))
        .thenAwait(Duration.ofMillis(1))
        .expectNext("ok")
        .verifyComplete();
    assertThat(startedAt).containsExactly(0L, 60_000L);
  }

  @Test
  void aRetryAfterOfTenBillionSecondsWaitsTheCap() {
    AtomicInteger attempts = new AtomicInteger();
    StepVerifier.withVirtualTime(() -> Mono.defer(() -> attempts.getAndIncrement() == 0
                ? Mono.<String>error(rateLimited("10000000000"))
                : Mono.just("ok"))
            .transformDeferred(retryWithBudget(RetryPolicy.builder().name("huge")
                .retryAfterCap(Duration.ofSeconds(30)).budget(RetryBudget.unlimited()).build())))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(29_999))
        .thenAwait(Duration.ofMillis(1))
        .expectNext("ok")
        .verifyComplete();
  }

  @Test
  void aToolRateLimitedWithAHugeRetryAfterGivesAnOutcomeAndCoolsDownForTheCap() {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    List<String> events = new CopyOnWriteArrayList<>();
    AtomicInteger calls = new AtomicInteger();
    Tool<String, String> tool = Tool.of(ToolDescriptor.builder("quotes.lookup")
            .sideEffect(SideEffect.READ_ONLY)
            .timeouts(CallTimeouts.fixed(Duration.ofSeconds(2)))
            .retry(RetryPolicy.builder().name("quotes").maxRetries(0).backoff(Backoff.fixed(Duration.ofMillis(100)))
                .budget(RetryBudget.unlimited()).build())
            .meterRegistry(meters)
            .eventLog(events::add)
            .build(),
        args -> Mono.defer(() -> calls.incrementAndGet() == 1
            ? Mono.error(rateLimited("10000000000")) : Mono.just("quote")),
        String.class);
    List<ToolOutcome<String>> outcomes = new CopyOnWriteArrayList<>();
    StepVerifier.withVirtualTime(() -> tool.outcome("ACME").doOnNext(outcomes::add)
            .then(Mono.delay(Duration.ofSeconds(59)))
            .then(tool.outcome("ACME").doOnNext(outcomes::add))
            .then(Mono.delay(Duration.ofSeconds(1)))
            .then(tool.outcome("ACME").doOnNext(outcomes::add))
            .then()
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofMinutes(10)).build())))
        .thenAwait(Duration.ofMinutes(1))
        .verifyComplete();
    assertThat(outcomes).hasSize(3);
    assertThat(outcomes.get(0)).isInstanceOf(ToolOutcome.Failure.class);
    assertThat(((ToolOutcome.Failure<String>) outcomes.get(0)).feedback().kind()).isEqualTo(FailureKind.RATE_LIMITED);
    assertThat(outcomes.get(1)).as("still cooling down 59 s later").isInstanceOf(ToolOutcome.Failure.class);
    assertThat(outcomes.get(2).forModel()).as("the cool-down ends at the 60 s cap").isEqualTo("quote");
    assertThat(calls).hasValue(2);
    assertThat(meters.find("breakwater.tool.calls").tag("tool", "quotes.lookup").timers()).isNotEmpty();
  }
}
