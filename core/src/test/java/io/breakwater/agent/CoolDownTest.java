package io.breakwater.agent;

import static io.breakwater.Breakwater.withTaskBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.HttpStatusException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The task's cool-down of a tool applies after rate-limited failures only. */
class CoolDownTest {

  final Fixtures fx = new Fixtures();

  /**
   * Regression: a tool with a failure on record and no cool-down was refused as rate-limited once the clock read
   * more than zero (the "no cool-down" marker, {@code Long.MIN_VALUE}, minus the time overflowed), and the refusal's
   * feedback then failed with an {@code ArithmeticException}. Found by {@code SecretsNeverLeakTest}.
   */
  @Test
  void aFailureThatIsNotRateLimitedStartsNoCoolDown() {
    AtomicInteger calls = new AtomicInteger();
    Tool<String, String> tool = Tool.of(fx.descriptor("crm.lookup").retry(Fixtures.retry("crm", 0).build()).build(),
        a -> Mono.defer(() -> calls.incrementAndGet() == 1 ? Mono.error(new HttpStatusException(503))
            : Mono.just("found")), String.class);
    StepVerifier.withVirtualTime(() -> tool.outcome("a")
            .then(Mono.delay(Duration.ofSeconds(1)))
            .then(tool.outcome("a"))
            .transformDeferred(withTaskBudget(TaskBudget.builder(Duration.ofMinutes(1)).build())))
        .thenAwait(Duration.ofSeconds(1))
        .assertNext(second -> assertThat(second.forModel()).isEqualTo("found"))
        .verifyComplete();
    assertThat(calls).hasValue(2);
  }
}
