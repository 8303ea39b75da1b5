package io.breakwater.retry;

import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.retryWithBudget;
import static io.breakwater.Breakwater.sideEffect;
import static io.breakwater.retry.RetryWithBudgetTest.VERIFY;
import static io.breakwater.retry.RetryWithBudgetTest.fixedPolicy;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.failure.HttpStatusException;
import io.breakwater.idempotency.IdempotencyContext;
import io.breakwater.idempotency.IdempotencyKey;
import io.breakwater.idempotency.IdempotencyStore;
import io.breakwater.idempotency.SideEffect;
import io.breakwater.idempotency.WriteOutcomeUnknownException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The rule for re-sending a write (issue 35): a {@code NON_IDEMPOTENT_WRITE} reaches the dependency at most once per
 * key, unless a failure proves it was not processed or the dependency deduplicates on the key it was sent.
 */
class RetriedWritesTest {

  private final IdempotencyStore store = IdempotencyStore.inMemory();
  private final IdempotencyKey key = IdempotencyKey.explicit("payments.charge", "order-42", 42);

  /** A payment dependency: each call charges, then answers with the next scripted outcome (or "receipt"). */
  private static final class Payments {
    final AtomicInteger charges = new AtomicInteger();
    final AtomicInteger requests = new AtomicInteger();
    final Deque<Throwable> script;
    final boolean sendsKey;

    Payments(boolean sendsKey, Throwable... script) {
      this.sendsKey = sendsKey;
      this.script = new ArrayDeque<>(List.of(script));
    }

    /** {@code reachesUs}: whether the scripted failure happens after the request was processed (a charge). */
    Mono<String> charge() {
      return Mono.deferContextual(ctx -> {
        requests.incrementAndGet();
        if (sendsKey) {
          IdempotencyContext.current(ctx).ifPresent(IdempotencyContext::markKeySent);
        }
        Throwable next = script.poll();
        if (next instanceof ConnectException || (next instanceof HttpStatusException h && h.status() == 429)) {
          return Mono.error(next);   // refused before processing: no charge
        }
        charges.incrementAndGet();
        return next == null ? Mono.just("receipt") : Mono.error(next);
      });
    }
  }

  private Mono<String> gettingStartedComposition(Payments payments, SideEffect declared) {
    Mono<String> call = payments.charge()
        .transformDeferred(retryWithBudget(fixedPolicy().name("payments").build()))
        .transformDeferred(idempotentBy(key, store, String.class));
    return declared == null ? call : call.transformDeferred(sideEffect(declared));
  }

  @Test
  void aPaymentThatChargesThenAnswers503InsideIdempotentByIsChargedOnce() {
    for (SideEffect declared : new SideEffect[] {null, SideEffect.NON_IDEMPOTENT_WRITE}) {
      Payments payments = new Payments(false, new HttpStatusException(503));
      IdempotencyKey own = IdempotencyKey.explicit("payments.charge", "order-" + declared, 42);
      Mono<String> call = payments.charge()
          .transformDeferred(retryWithBudget(fixedPolicy().name("payments").build()))
          .transformDeferred(idempotentBy(own, store, String.class));
      StepVerifier.withVirtualTime(() -> declared == null ? call : call.transformDeferred(sideEffect(declared)))
          .expectErrorSatisfies(e -> assertThat(e).as("the dependency's own answer, not retried")
              .isInstanceOf(HttpStatusException.class))
          .verify(VERIFY);
      assertThat(payments.charges).as(declared + ": charged once").hasValue(1);
      StepVerifier.withVirtualTime(() -> payments.charge().transformDeferred(idempotentBy(own, store, String.class)))
          .expectError(WriteOutcomeUnknownException.class)
          .verify(VERIFY);
      assertThat(payments.charges).as(declared + ": a duplicate never charges again").hasValue(1);
    }
  }

  @Test
  void aWriteThatTimesOutIsNotSentAgainAndTheRetryTellsWhy() {
    Payments payments = new Payments(false, new HttpStatusException(429), new TimeoutException("no answer"));
    StepVerifier.withVirtualTime(() -> gettingStartedComposition(payments, SideEffect.NON_IDEMPOTENT_WRITE))
        .thenAwait(Duration.ofMinutes(1))
        .expectErrorSatisfies(e -> {
          RetryExhaustedException x = (RetryExhaustedException) e;
          assertThat(x.reason()).isEqualTo(RetryStopReason.WRITE_OUTCOME_UNKNOWN);
          assertThat(x.attempts()).hasSize(2);
        })
        .verify(VERIFY);
    assertThat(payments.requests).as("the 429 is re-sent, the timeout is not").hasValue(2);
    assertThat(payments.charges).hasValue(1);
  }

  @Test
  void aWriteRefusedBeforeItWasProcessedIsRetried() {
    Payments payments = new Payments(false, new HttpStatusException(429), new ConnectException("Connection refused"));
    StepVerifier.withVirtualTime(() -> gettingStartedComposition(payments, null))
        .thenAwait(Duration.ofMinutes(1))
        .expectNext("receipt")
        .expectComplete()
        .verify(VERIFY);
    assertThat(payments.requests).hasValue(3);
    assertThat(payments.charges).hasValue(1);
  }

  @Test
  void aDeduplicatedWriteIsRetriedAfterA503WhenItsKeyWentOutWithEveryAttempt() {
    Payments payments = new Payments(true, new HttpStatusException(503), new HttpStatusException(503));
    StepVerifier.withVirtualTime(() -> gettingStartedComposition(payments, SideEffect.DEDUPLICATED_WRITE))
        .thenAwait(Duration.ofMinutes(1))
        .expectNext("receipt")
        .expectComplete()
        .verify(VERIFY);
    assertThat(payments.requests).as("re-sent: the dependency deduplicates on the key").hasValue(3);
  }

  @Test
  void aDeduplicatedWriteWhoseKeyWasNotSentIsNotSentAgain() {
    Payments payments = new Payments(false, new HttpStatusException(503));
    StepVerifier.withVirtualTime(() -> gettingStartedComposition(payments, SideEffect.DEDUPLICATED_WRITE))
        .expectError(HttpStatusException.class)
        .verify(VERIFY);
    assertThat(payments.requests).as("no key went out, so nothing deduplicates a second send").hasValue(1);
  }

  @Test
  void aDeduplicatedWriteOutsideIdempotentByIsRefusedBeforeItIsSent() {
    Payments payments = new Payments(true);
    StepVerifier.withVirtualTime(() -> payments.charge()
            .transformDeferred(retryWithBudget(fixedPolicy().build()))
            .transformDeferred(sideEffect(SideEffect.DEDUPLICATED_WRITE)))
        .expectError(UnsafeRetryException.class)
        .verify(VERIFY);
    assertThat(payments.requests).hasValue(0);
  }

  @Test
  void readsAndIdempotentWritesInsideIdempotentByAreRetriedAsBefore() {
    for (SideEffect declared : new SideEffect[] {SideEffect.READ_ONLY, SideEffect.IDEMPOTENT_WRITE}) {
      Payments payments = new Payments(false, new HttpStatusException(503));
      IdempotencyKey own = IdempotencyKey.explicit("payments.charge", "order-" + declared, 42);
      StepVerifier.withVirtualTime(() -> payments.charge()
              .transformDeferred(retryWithBudget(fixedPolicy().build()))
              .transformDeferred(idempotentBy(own, store, String.class))
              .transformDeferred(sideEffect(declared)))
          .thenAwait(Duration.ofMinutes(1))
          .expectNext("receipt")
          .expectComplete()
        .verify(VERIFY);
      assertThat(payments.requests).as(declared.name()).hasValue(2);
    }
  }
}
