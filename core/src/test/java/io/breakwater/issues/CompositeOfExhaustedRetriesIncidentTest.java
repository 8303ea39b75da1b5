package io.breakwater.issues;

import static io.breakwater.Breakwater.retryWithBudget;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.FailureClassifier;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.retry.Backoff;
import io.breakwater.retry.RetryBudget;
import io.breakwater.retry.RetryExhaustedException;
import io.breakwater.retry.RetryPolicy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Review defect 6: the outer retry of a nested pair walked only {@code getCause()}, so when {@code zipDelayError},
 * {@code whenDelayError} or {@code mergeDelayError} put the inner retries' {@code RetryExhaustedException}s into a
 * composite ({@code Exceptions.multiple}, the parts as suppressed exceptions), the composite was classified
 * {@code UNKNOWN} and retried: each call ran 6 times instead of 3. A composite now counts as spent when any of its
 * parts was, and is classified by its parts.
 */
class CompositeOfExhaustedRetriesIncidentTest {

  static RetryPolicy policy(String name) {
    return RetryPolicy.builder().name(name).maxRetries(2).backoff(Backoff.fixed(Duration.ofMillis(100)))
        .timeoutBase(Duration.ZERO).budget(RetryBudget.unlimited()).build();
  }

  /** A call that always fails with 503, retried by its own policy: 3 attempts. */
  static Mono<String> failingCall(AtomicInteger runs, String name) {
    return Mono.defer(() -> {
      runs.incrementAndGet();
      return Mono.<String>error(new HttpStatusException(503));
    }).transformDeferred(retryWithBudget(policy(name)));
  }

  void assertEachCallRunsThreeTimes(BiFunction<Mono<String>, Mono<String>, Mono<?>> combine) {
    AtomicInteger a = new AtomicInteger();
    AtomicInteger b = new AtomicInteger();
    StepVerifier.withVirtualTime(() -> combine.apply(failingCall(a, "a"), failingCall(b, "b"))
            .transformDeferred(retryWithBudget(policy("outer"))))
        .expectSubscription()
        .thenAwait(Duration.ofMinutes(1))
        .expectErrorSatisfies(e -> {
          assertThat(Exceptions.isMultiple(e)).isTrue();
          assertThat(Exceptions.unwrapMultiple(e)).hasSize(2).allMatch(RetryExhaustedException.class::isInstance);
        })
        .verify(Duration.ofSeconds(5));
    assertThat(a).hasValue(3);
    assertThat(b).hasValue(3);
  }

  @Test
  void zipDelayErrorOfTwoExhaustedRetriesIsNotRetriedAgain() {
    assertEachCallRunsThreeTimes((x, y) -> Mono.zipDelayError(x, y));
  }

  @Test
  void whenDelayErrorOfTwoExhaustedRetriesIsNotRetriedAgain() {
    assertEachCallRunsThreeTimes((x, y) -> Mono.whenDelayError(x, y));
  }

  @Test
  void concatDelayErrorOfTwoExhaustedRetriesIsNotRetriedAgain() {
    assertEachCallRunsThreeTimes((x, y) -> Flux.concatDelayError(x, y).then());
  }

  @Test
  void fluxMergeDelayErrorOfTwoExhaustedRetriesIsNotRetriedAgain() {
    assertEachCallRunsThreeTimes((x, y) -> Flux.mergeDelayError(32, x, y).then());
  }

  @Test
  void aCompositeIsClassifiedByItsParts() {
    FailureClassifier defaults = FailureClassifier.defaults();
    Throwable serverErrors = Exceptions.multiple(new HttpStatusException(503), new HttpStatusException(502));
    Throwable mixed = Exceptions.multiple(new HttpStatusException(503), new HttpStatusException(422));
    Throwable rateLimited = Exceptions.multiple(new HttpStatusException(503), new HttpStatusException(429));
    Throwable unknown = Exceptions.multiple(new HttpStatusException(503), new IllegalStateException("?"));
    assertThat(defaults.classify(serverErrors)).isEqualTo(FailureKind.SERVER_ERROR);
    assertThat(defaults.classify(mixed)).as("one part will fail again whatever we do")
        .isEqualTo(FailureKind.INVALID_ARGUMENT);
    assertThat(defaults.classify(rateLimited)).as("the part that needs the longest wait")
        .isEqualTo(FailureKind.RATE_LIMITED);
    assertThat(defaults.classify(unknown)).isEqualTo(FailureKind.UNKNOWN);
    assertThat(defaults.classify(new RuntimeException("wrapped", mixed))).isEqualTo(FailureKind.INVALID_ARGUMENT);
  }

  @Test
  void aCompositeWithANonRetryablePartIsPassedThroughAfterOneAttempt() {
    AtomicInteger runs = new AtomicInteger();
    StepVerifier.withVirtualTime(() -> Mono.zipDelayError(
                Mono.defer(() -> {
                  runs.incrementAndGet();
                  return Mono.<String>error(new HttpStatusException(503));
                }),
                Mono.<String>error(new HttpStatusException(422)))
            .transformDeferred(retryWithBudget(policy("outer"))))
        .expectSubscription()
        .thenAwait(Duration.ofMinutes(1))
        .expectErrorMatches(Exceptions::isMultiple)
        .verify(Duration.ofSeconds(5));
    assertThat(runs).hasValue(1);
  }

  @Test
  void theOuterRetryUsesItsOwnClassifierOnEachPart() {
    class Declined extends RuntimeException {
    }
    RetryPolicy outer = policy("outer").toBuilder()
        .classifier(FailureClassifier.of(Declined.class, FailureKind.BUSINESS).orElse(FailureClassifier.defaults()))
        .build();
    AtomicInteger runs = new AtomicInteger();
    StepVerifier.withVirtualTime(() -> Mono.zipDelayError(
                Mono.defer(() -> {
                  runs.incrementAndGet();
                  return Mono.<String>error(new HttpStatusException(503));
                }),
                Mono.<String>error(new Declined()))
            .transformDeferred(retryWithBudget(outer)))
        .expectSubscription()
        .thenAwait(Duration.ofMinutes(1))
        .expectErrorMatches(Exceptions::isMultiple)
        .verify(Duration.ofSeconds(5));
    assertThat(runs).hasValue(1);
  }
}
