package io.breakwater.stream.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryPolicy;
import io.breakwater.stream.FirstItemTimeoutException;
import io.breakwater.stream.IdleTimeoutException;
import io.breakwater.stream.StreamTimeouts;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

class LlmGuardTest {

  private static LlmGuard guard() {
    return LlmGuard.builder("test")
        .timeouts(StreamTimeouts.builder().firstItem(Duration.ofSeconds(2)).idle(Duration.ofSeconds(1)).build())
        .retry(RetryPolicy.builder().name("llm-guard-test").maxRetries(1)
            .backoff(Backoff.fullJitter(Duration.ofMillis(10), Duration.ofMillis(20))).build())
        .build();
  }

  @Test
  void aStallAfterContentFailsWithTheIdleTimeoutItselfAfterThePartialAnswer() {
    StepVerifier.withVirtualTime(() -> guard().stream(
            Flux.just("", "Hel").concatWith(Flux.never()), text -> !text.isEmpty()))
        .expectNext("", "Hel")
        .thenAwait(Duration.ofSeconds(1))
        .expectError(IdleTimeoutException.class)
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void framingDoesNotCountAsAFirstItemAndASlowFirstContentIsAskedAgain() {
    AtomicInteger attempts = new AtomicInteger();
    StepVerifier.withVirtualTime(() -> guard().stream(Flux.defer(() -> attempts.incrementAndGet() == 1
            ? Flux.just("").concatWith(Flux.never())
            : Flux.just("ok")), text -> !text.isEmpty()))
        .thenAwait(Duration.ofSeconds(5))
        .expectNext("ok")
        .verifyComplete();
    assertThat(attempts).hasValue(2);
  }

  @Test
  void aFirstContentThatNeverComesIsGivenUpAfterTheRetries() {
    StepVerifier.withVirtualTime(() -> guard().stream(Flux.<String>never(), text -> !text.isEmpty()))
        .thenAwait(Duration.ofSeconds(10))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(RetryExhaustedException.class)
            .hasCauseInstanceOf(FirstItemTimeoutException.class))
        .verify(Duration.ofSeconds(5));
  }

  @Test
  void framingIsHeldUntilTheFirstContentAndDeliveredBeforeIt() {
    StepVerifier.create(guard().stream(Flux.just("", "Hel", ""), text -> !text.isEmpty()))
        .expectNext("", "Hel", "")
        .verifyComplete();
  }

  @Test
  void framingOfAnAttemptThatFailsBeforeContentIsNeverDelivered() {
    StepVerifier.create(guard().stream(Flux.just("").concatWith(Flux.error(new IllegalArgumentException("bad"))),
            text -> !text.isEmpty()))
        .verifyErrorMessage("bad");
  }

  @Test
  void framingOfAnAnswerWithoutContentIsDeliveredWhenItEnds() {
    StepVerifier.create(guard().stream(Flux.just(""), text -> !text.isEmpty())).expectNext("").verifyComplete();
  }

  @Test
  void buildRefusesABlankNameAndNonPositiveBudgets() {
    assertThatThrownBy(() -> LlmGuard.builder(" ").build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("give the model's name");
    assertThatThrownBy(() -> LlmGuard.builder("m").deadline(Duration.ZERO).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("deadline is PT0S: give a positive");
    assertThatThrownBy(() -> LlmGuard.builder("m").callTimeout(Duration.ofSeconds(-1)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("callTimeout is PT-1S");
  }

  @Test
  void theDefaultsNameTheBreakerAfterTheModel() {
    assertThat(LlmGuard.of("openai").breaker().name()).isEqualTo("llm:openai");
  }
}
