package io.breakwater.issues;

import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.agent.TaskBudget;
import io.breakwater.agent.Tool;
import io.breakwater.agent.ToolDescriptor;
import io.breakwater.idempotency.IdempotencyPolicy;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Incident 4: the arguments of an e-mail tool carried a fresh request id and timestamp on every call, so the same
 * e-mail got a new idempotency key each time and was sent twice. Declaring those fields transient keys the call on
 * what it does.
 */
class TransientFieldsDuplicateKeysIncidentTest {

  static final Duration VERIFY = Duration.ofSeconds(5);

  record Email(String to, String subject, String body, String requestId, Instant sentAt) {}

  final AtomicInteger sent = new AtomicInteger();

  Mono<String> send(Email e) {
    return Mono.fromCallable(() -> "sent #" + sent.incrementAndGet());
  }

  Mono<String> agentSendsTwice(Tool<Email, String> tool) {
    Email first = new Email("ana@example.org", "Your trip", "Lisbon, 3 nights", "req-1", Instant.parse(
        "2026-11-30T08:00:00Z"));
    Email again = new Email("ana@example.org", "Your trip", "Lisbon, 3 nights", "req-2", Instant.parse(
        "2026-11-30T08:00:07Z"));
    return tool.call(first).then(tool.call(again))
        .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofSeconds(30)).build()));
  }

  ToolDescriptor.Builder mail() {
    return ToolDescriptor.builder("mail.send").sideEffect(SideEffect.NON_IDEMPOTENT_WRITE)
        .idempotency(IdempotencyPolicy.of(IdempotencyStore.inMemory())).singleTenant()
        .meterRegistry(new SimpleMeterRegistry()).eventLog(e -> { });
  }

  @Test
  void keyingOnEveryFieldSendsTheSameEmailTwice() {
    Tool<Email, String> tool = Tool.of(mail().build(), this::send, String.class);
    StepVerifier.withVirtualTime(() -> agentSendsTwice(tool)).expectNext("sent #2").expectComplete().verify(VERIFY);
    assertThat(sent).hasValue(2);
  }

  @Test
  void transientFieldsLeftOutOfTheKeySendItOnce() {
    Tool<Email, String> tool = Tool.of(mail().transientFields("requestId", "sentAt").build(), this::send,
        String.class);
    StepVerifier.withVirtualTime(() -> agentSendsTwice(tool)).expectNext("sent #1").expectComplete().verify(VERIFY);
    assertThat(sent).hasValue(1);
  }
}
