package io.breakwater.issues;

import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.agent.ToolOutcome;
import io.breakwater.failure.FailureKind;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Incident 3: a refund was paid three times because its idempotency key expired (1 minute) while the agent kept
 * re-asking for it over several minutes. Breakwater refuses a key TTL shorter than the task's deadline before any
 * refund is made, and with a proper TTL the three requests pay once.
 */
class RefundTripledByExpiredKeyIncidentTest {

  static final Duration VERIFY = Duration.ofSeconds(5);

  record Refund(String order, long cents) {}

  final AtomicInteger refundsPaid = new AtomicInteger();

  Mono<String> pay(Refund r) {
    return Mono.fromCallable(() -> "refund #" + refundsPaid.incrementAndGet() + " of " + r.cents() + " for "
        + r.order());
  }

  Tool<Refund, String> refundTool(IdempotencyPolicy policy) {
    return Tool.of(ToolDescriptor.builder("payments.refund").sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)
            .idempotency(policy).singleTenant().meterRegistry(new SimpleMeterRegistry()).eventLog(e -> { }).build(),
        this::pay, String.class);
  }

  /** The agent asks for the same refund at 0, 2 and 4 minutes (it did not trust the first answer). */
  Mono<String> agent(Tool<Refund, String> refund) {
    Refund r = new Refund("order-42", 12_000);
    return refund.outcome(r)
        .then(Mono.delay(Duration.ofMinutes(2))).then(refund.outcome(r))
        .then(Mono.delay(Duration.ofMinutes(2))).then(refund.outcome(r))
        .map(ToolOutcome::forModel);
  }

  @Test
  void aKeyThatExpiresBeforeTheAgentStopsAskingPaysThreeTimes() {
    IdempotencyPolicy oneMinute = IdempotencyPolicy.builder(IdempotencyStore.inMemory()).ttl(Duration.ofMinutes(1))
        .lease(Duration.ofSeconds(30)).build();
    // no task deadline: nothing can compare the TTL to how long the agent keeps asking
    StepVerifier.withVirtualTime(() -> agent(refundTool(oneMinute)))
        .thenAwait(Duration.ofMinutes(5))
        .expectNext("refund #3 of 12000 for order-42")
        .expectComplete().verify(VERIFY);
    assertThat(refundsPaid).hasValue(3);
  }

  @Test
  void aTaskLongerThanTheKeyTtlIsRefusedBeforeAnyRefund() {
    IdempotencyPolicy oneMinute = IdempotencyPolicy.builder(IdempotencyStore.inMemory()).ttl(Duration.ofMinutes(1))
        .lease(Duration.ofSeconds(30)).build();
    StepVerifier.withVirtualTime(() -> agent(refundTool(oneMinute))
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofMinutes(10)).build())))
        .thenAwait(Duration.ofMinutes(5))
        .assertNext(feedback -> assertThat(feedback).contains("kind: " + FailureKind.MISCONFIGURED.tag(),
            "is kept only 1m", "avoid: calling payments.refund again in this task"))
        .expectComplete().verify(VERIFY);
    assertThat(refundsPaid).hasValue(0);
  }

  @Test
  void withAKeyThatOutlivesTheTaskTheRefundIsPaidOnce() {
    IdempotencyPolicy day = IdempotencyPolicy.of(IdempotencyStore.inMemory());   // 24 h
    StepVerifier.withVirtualTime(() -> agent(refundTool(day))
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofMinutes(10)).build())))
        .thenAwait(Duration.ofMinutes(5))
        .expectNext("refund #1 of 12000 for order-42")
        .expectComplete().verify(VERIFY);
    assertThat(refundsPaid).hasValue(1);
  }
}
