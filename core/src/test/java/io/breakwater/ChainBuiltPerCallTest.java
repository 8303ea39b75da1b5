package io.breakwater;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.Breakwater.perCallTimeout;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.breaker.CircuitBreaker;
import io.breakwater.deadline.CallTimeoutException;
import io.breakwater.deadline.DeadlineExceededException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Users build the chain inside the method that makes each call ({@code flights()} of getting-started.md): the
 * operators that call makes from the same settings are the same stateless objects, made once, and every call still
 * gets its own deadline, timer and breaker admission.
 */
class ChainBuiltPerCallTest {

  @Test
  void perCallTimeoutIsOneOperatorForEveryCall() {
    assertThat(Breakwater.<String>perCallTimeout()).isSameAs(Breakwater.<Integer>perCallTimeout());
  }

  @Test
  void withDeadlineOfEqualBudgetsIsOneOperator() {
    assertThat(Breakwater.<String>withDeadline(Duration.ofSeconds(10)))
        .isSameAs(Breakwater.<String>withDeadline(Duration.ofMillis(10_000)));
    assertThat(Breakwater.<String>withDeadline(Duration.ofSeconds(10)))
        .isNotSameAs(Breakwater.<String>withDeadline(Duration.ofSeconds(11)));
  }

  @Test
  void guardedByTheSameBreakerIsOneOperator() {
    CircuitBreaker breaker = CircuitBreaker.ofDefaults("flights");
    assertThat(Breakwater.<String>guardedBy(breaker)).isSameAs(Breakwater.<Integer>guardedBy(breaker));
    assertThat(Breakwater.<String>guardedBy(breaker))
        .isNotSameAs(Breakwater.<String>guardedBy(CircuitBreaker.ofDefaults("flights")));
  }

  @Test
  void aBadBudgetIsStillRefusedEveryTime() {
    for (int i = 0; i < 2; i++) {
      assertThatThrownBy(() -> withDeadline(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("negative");
    }
  }

  @Test
  void eachCallBuiltWithTheSharedOperatorsHasItsOwnDeadline() {
    CircuitBreaker breaker = CircuitBreaker.ofDefaults("flights");
    StepVerifier.withVirtualTime(() -> Mono.<String>never()
            .transformDeferred(perCallTimeout())
            .transformDeferred(guardedBy(breaker))
            .transformDeferred(withDeadline(Duration.ofSeconds(10)))
            .onErrorResume(CallTimeoutException.class, first -> Mono.delay(Duration.ofSeconds(1))
                // a second call, built after the first timed out: its per-call budget runs from its own start
                .then(Mono.<String>never()
                    .transformDeferred(perCallTimeout())
                    .transformDeferred(guardedBy(breaker))
                    .transformDeferred(withDeadline(Duration.ofSeconds(10))))))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(6_000 + 1_000 + 5_999))   // 6 s (0.6 × 10 s), 1 s, then 0.6 × 10 s
        .thenAwait(Duration.ofMillis(1))
        .expectError(CallTimeoutException.class)
        .verify(Duration.ofSeconds(5));
    StepVerifier.withVirtualTime(() -> Mono.<String>never().transformDeferred(withDeadline(Duration.ofSeconds(10))))
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(9_999))
        .thenAwait(Duration.ofMillis(1))
        .expectError(DeadlineExceededException.class)
        .verify(Duration.ofSeconds(5));
  }
}
