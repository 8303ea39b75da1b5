package io.breakwater.idempotency;

import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.sideEffect;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import com.fasterxml.jackson.core.type.TypeReference;
import io.breakwater.agent.StepBudgetExhaustedException;
import io.breakwater.breaker.CircuitBreakerOpenException;
import io.breakwater.deadline.DeadlineSpec;
import io.breakwater.failure.FailureKind;
import io.breakwater.failure.HttpStatusException;
import io.breakwater.internal.ContextKeys;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.publisher.PublisherProbe;
import reactor.test.scheduler.VirtualTimeScheduler;

class IdempotentByTest {

  static final byte[] SECRET = DelegatingStore.SECRET;

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
  private final IdempotencyStore store = IdempotencyStore.inMemory(16L << 20, () -> clock);
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final AtomicInteger executions = new AtomicInteger();
  private final IdempotencyKey key = IdempotencyKey.explicit("payments.refund", "order-42", Map.of("amount", 30));

  private IdempotencyPolicy.Builder policy() {
    return IdempotencyPolicy.builder(store).scheduler(() -> clock).meterRegistry(meters);
  }

  /** A refund that takes {@code duration} and answers with how many refunds ran so far. */
  private Mono<String> refund(Duration duration) {
    return Mono.delay(duration, clock).map(x -> "refund-" + executions.incrementAndGet());
  }

  private Mono<String> idempotentRefund(IdempotencyPolicy policy, Duration duration) {
    return refund(duration).transformDeferred(idempotentBy(key, policy, String.class));
  }

  private double count(String outcome) {
    return meters.get("breakwater.idempotency.calls").tag("tool", "payments.refund").tag("outcome", outcome)
        .counter().count();
  }

  @Test
  void tenantsWithTheSameArgumentsNeverSeeEachOthersResults() {
    IdempotencyPolicy policy = policy().build();
    Map<String, Object> sameArgs = Map.of("report", "monthly", "month", "2026-11");
    for (int round = 0; round < 2; round++) {
      for (String tenant : List.of("acme", "globex")) {
        IdempotencyKey key = IdempotencyKey.builder("reports.get").namespace(tenant).args(sameArgs).build();
        Mono<String> report = Mono.fromSupplier(() -> tenant + "-report-" + executions.incrementAndGet());
        // each tenant runs once, then gets its own stored result back, never the other tenant's
        StepVerifier.create(report.transformDeferred(idempotentBy(key, policy, String.class)))
            .expectNext(tenant + "-report-" + (tenant.equals("acme") ? 1 : 2))
            .verifyComplete();
      }
    }
    assertThat(executions).hasValue(2);
    assertThat(meters.get("breakwater.idempotency.calls").tag("tool", "reports.get").tag("outcome", "hit")
        .counter().count()).isEqualTo(2);
  }

  @Test
  void firstCallRunsAndLaterCallsReplayItsResult() {
    IdempotencyPolicy policy = policy().build();
    for (int i = 0; i < 3; i++) {
      StepVerifier.create(idempotentRefund(policy, Duration.ZERO)).expectNext("refund-1").verifyComplete();
    }
    assertThat(executions).hasValue(1);
    assertThat(count("miss")).isEqualTo(1);
    assertThat(count("hit")).isEqualTo(2);
    assertThat(meters.get("breakwater.idempotency.hit.ratio").gauge().value()).isEqualTo(2.0 / 3);
  }

  @Test
  void hitsNeverSubscribeUpstream() {
    IdempotencyPolicy policy = policy().build();
    StepVerifier.create(idempotentRefund(policy, Duration.ZERO)).expectNext("refund-1").verifyComplete();
    PublisherProbe<String> second = PublisherProbe.of(refund(Duration.ZERO));

    StepVerifier.create(second.mono().transformDeferred(idempotentBy(key, policy, String.class)))
        .expectNext("refund-1")
        .verifyComplete();
    second.assertWasNotSubscribed();
  }

  @Test
  void concurrentDuplicatesWaitForTheOwnersOutcomeAndAreWokenAtOnce() {
    // Polling every 10 s would answer late: the duplicates are woken by the store the moment the owner completes.
    IdempotencyPolicy policy = policy().pollInterval(Duration.ofSeconds(10)).build();
    List<String> results = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      idempotentRefund(policy, Duration.ofSeconds(2)).subscribe(results::add);
    }
    clock.advanceTimeBy(Duration.ofSeconds(2));

    assertThat(results).containsExactly("refund-1", "refund-1", "refund-1", "refund-1", "refund-1");
    assertThat(executions).hasValue(1);
    assertThat(count("in_flight")).isEqualTo(4);
  }

  @Test
  void duplicatesFailFastWhenConfiguredTo() {
    IdempotencyPolicy policy = policy().failFastWhenInFlight().lease(Duration.ofSeconds(30)).build();
    Disposable owner = idempotentRefund(policy, Duration.ofSeconds(10)).subscribe();
    clock.advanceTimeBy(Duration.ofSeconds(4));

    StepVerifier.create(idempotentRefund(policy, Duration.ofSeconds(10)))
        .expectErrorSatisfies(e -> {
          IdempotencyInFlightException inFlight = (IdempotencyInFlightException) e;
          assertThat(inFlight.failureKind()).isEqualTo(FailureKind.CONFLICT);
          assertThat(inFlight.leaseRemaining()).isEqualTo(Duration.ofSeconds(26));
        })
        .verify();
    owner.dispose();
  }

  @Test
  void sameKeyWithAnotherPayloadIsRefusedAndNothingRuns() {
    IdempotencyPolicy policy = policy().build();
    StepVerifier.create(idempotentRefund(policy, Duration.ZERO)).expectNext("refund-1").verifyComplete();
    IdempotencyKey tampered = IdempotencyKey.explicit("payments.refund", "order-42", Map.of("amount", 3000));

    StepVerifier.create(refund(Duration.ZERO).transformDeferred(idempotentBy(tampered, policy, String.class)))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IdempotencyKeyMismatchException.class)
            .hasMessageContaining("was used with another payload"))
        .verify();
    assertThat(executions).hasValue(1);
    assertThat(count("mismatch")).isEqualTo(1);
  }

  @Test
  void retryableFailureOfAnIdempotentWriteFreesTheKeySoARetryRuns() {
    IdempotencyPolicy policy = policy().build();
    StepVerifier.create(Mono.<String>error(new HttpStatusException(503))
            .doOnSubscribe(s -> executions.incrementAndGet())
            .transformDeferred(idempotentBy(key, policy, String.class))
            .transformDeferred(sideEffect(SideEffect.IDEMPOTENT_WRITE)))
        .expectError(HttpStatusException.class)
        .verify();

    StepVerifier.create(idempotentRefund(policy, Duration.ZERO)).expectNext("refund-2").verifyComplete();
  }

  /** Issue 35: a 503 leaves open whether the refund was made, so no duplicate makes it again. */
  @Test
  void aWriteThatFailedAfterItWasSentKeepsItsKeyAndDuplicatesAreToldItsOutcomeIsUnknown() {
    IdempotencyPolicy policy = policy().build();
    for (Throwable unknown : List.of(new HttpStatusException(503), new java.util.concurrent.TimeoutException(),
        new java.io.IOException("Connection reset by peer"))) {
      IdempotencyKey write = IdempotencyKey.explicit("payments.refund", "order-" + unknown.hashCode(), Map.of());
      StepVerifier.create(Mono.<String>error(unknown)
              .doOnSubscribe(s -> executions.incrementAndGet())
              .transformDeferred(idempotentBy(write, policy, String.class)))
          .expectErrorMatches(e -> e == unknown)
          .verify();
      StepVerifier.create(refund(Duration.ZERO).transformDeferred(idempotentBy(write, policy, String.class)))
          .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(WriteOutcomeUnknownException.class)
              .hasMessageContaining("may already have happened")
              .satisfies(w -> assertThat(((WriteOutcomeUnknownException) w).failureKind())
                  .isEqualTo(FailureKind.OUTCOME_UNKNOWN)))
          .verify();
    }
    assertThat(executions).as("each refund sent once, never by a duplicate").hasValue(3);
  }

  /** Issue 35: a 429 or a connection never opened proves the write was not processed: the key is free again. */
  @Test
  void aWriteRefusedBeforeItWasProcessedFreesTheKey() {
    IdempotencyPolicy policy = policy().build();
    for (Throwable unsent : List.of(new HttpStatusException(429), new java.net.ConnectException("Connection refused"),
        CircuitBreakerOpenException.open("payments", Duration.ofSeconds(30)))) {
      IdempotencyKey write = IdempotencyKey.explicit("payments.refund", "order-" + unsent.hashCode(), Map.of());
      StepVerifier.create(Mono.<String>error(unsent).transformDeferred(idempotentBy(write, policy, String.class)))
          .expectErrorMatches(e -> e == unsent)
          .verify();
      StepVerifier.create(refund(Duration.ZERO).transformDeferred(idempotentBy(write, policy, String.class)))
          .expectNextMatches(r -> r.startsWith("refund-"))
          .verifyComplete();
    }
  }

  @Test
  void nonRetryableFailureFreesTheKeyByDefault() {
    IdempotencyPolicy policy = policy().build();
    StepVerifier.create(Mono.<String>error(new IllegalArgumentException("amount must be positive"))
            .transformDeferred(idempotentBy(key, policy, String.class)))
        .expectError(IllegalArgumentException.class)
        .verify();

    StepVerifier.create(idempotentRefund(policy, Duration.ZERO)).expectNext("refund-1").verifyComplete();
  }

  @Test
  void nonRetryableFailureIsReplayedWhenPolicyKeepsIt() {
    IdempotencyPolicy policy = policy().cacheNonRetryableFailures(true).build();
    StepVerifier.create(Mono.<String>error(new IllegalArgumentException("amount must be positive"))
            .transformDeferred(idempotentBy(key, policy, String.class)))
        .expectError(IllegalArgumentException.class)
        .verify();

    StepVerifier.create(idempotentRefund(policy, Duration.ZERO))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(CachedFailureException.class).hasMessage("amount must be positive");
          assertThat(((CachedFailureException) e).failureKind()).isEqualTo(FailureKind.INVALID_ARGUMENT);
        })
        .verify();
    assertThat(executions).hasValue(0);
  }

  @Test
  void retryableFailureIsNeverKept() {
    IdempotencyPolicy policy = policy().cacheNonRetryableFailures(true).build();
    StepVerifier.create(Mono.<String>error(new HttpStatusException(429))
            .transformDeferred(idempotentBy(key, policy, String.class)))
        .expectError(HttpStatusException.class)
        .verify();

    StepVerifier.create(idempotentRefund(policy, Duration.ZERO)).expectNext("refund-1").verifyComplete();
  }

  @Test
  void failuresThatAreNotTheDependencysAnswerAreNeverKept() {
    IdempotencyPolicy policy = policy().cacheNonRetryableFailures(true).build();
    for (Throwable notAnAnswer : List.of(
        CircuitBreakerOpenException.open("payments", Duration.ofSeconds(30)),
        new StepBudgetExhaustedException("plan-trip", 20),
        new AssertionError("a bug on our side"))) {
      StepVerifier.create(Mono.<String>error(notAnAnswer).transformDeferred(idempotentBy(key, policy, String.class))
              .transformDeferred(sideEffect(SideEffect.IDEMPOTENT_WRITE)))
          .expectErrorMatches(e -> e == notAnAnswer)
          .verify();
    }

    StepVerifier.create(idempotentRefund(policy, Duration.ZERO)).expectNext("refund-1").verifyComplete();
  }

  @Test
  void cancelledOwnerOfAnIdempotentWriteLeavesNoOrphanClaim() {
    IdempotencyPolicy policy = policy().lease(Duration.ofMinutes(5)).failFastWhenInFlight().build();
    Disposable owner = idempotentRefund(policy, Duration.ofSeconds(10))
        .transformDeferred(sideEffect(SideEffect.IDEMPOTENT_WRITE)).subscribe();
    clock.advanceTimeBy(Duration.ofSeconds(1));
    owner.dispose();

    StepVerifier.create(idempotentRefund(policy, Duration.ZERO)).expectNext("refund-1").verifyComplete();
  }

  /**
   * Issue 35: a refund cancelled (by its caller or a deadline) after it was sent may still be made by the dependency;
   * its key is kept, so another caller, in this process or another, is told instead of refunding again.
   */
  @Test
  void aWriteCancelledAfterItWasSentKeepsItsKeyForEveryDuplicate() {
    IdempotencyPolicy policy = policy().lease(Duration.ofMinutes(5)).build();
    AtomicInteger sent = new AtomicInteger();
    Disposable owner = Mono.delay(Duration.ofSeconds(10), clock).map(x -> "refund")
        .doOnSubscribe(s -> sent.incrementAndGet())
        .transformDeferred(idempotentBy(key, policy, String.class))
        .transformDeferred(withDeadline(DeadlineSpec.builder(Duration.ofSeconds(5)).scheduler(() -> clock).build()))
        .subscribe(null, e -> { });
    clock.advanceTimeBy(Duration.ofSeconds(6));
    assertThat(owner.isDisposed()).as("the deadline ended it").isTrue();

    StepVerifier.create(Mono.fromSupplier(() -> "refund-" + sent.incrementAndGet())
            .transformDeferred(idempotentBy(key, policy, String.class)))
        .expectError(WriteOutcomeUnknownException.class)
        .verify();
    assertThat(sent).as("sent once").hasValue(1);
  }

  /** Issue 35: cancelled before the write was subscribed, nothing was sent, and the key is free. */
  @Test
  void aWriteCancelledWhileItsClaimIsOnItsWayFreesTheKey() {
    Sinks.One<IdempotencyStore.Claim> reply = Sinks.one();
    IdempotencyStore slow = new DelegatingStore(store) {
      @Override
      public Mono<IdempotencyStore.Claim> claim(String k, String fingerprint, String owner, Duration lease) {
        return store.claim(k, fingerprint, owner, lease).delayUntil(c -> reply.asMono());
      }
    };
    IdempotencyPolicy policy = IdempotencyPolicy.builder(slow).keySecret(SECRET).scheduler(() -> clock)
        .meterRegistry(meters).build();
    Disposable owner = idempotentRefund(policy, Duration.ZERO).subscribe();
    owner.dispose();
    reply.tryEmitValue(new IdempotencyStore.Acquired(false));
    StepVerifier.create(idempotentRefund(policy, Duration.ZERO)).expectNext("refund-1").verifyComplete();
  }

  @Test
  void crashedOwnersLeaseExpiresAndTheNextCallerRunsAgain() {
    IdempotencyPolicy policy = policy().build();
    // An owner in another process claimed the key with a 30 s lease, then crashed.
    assertThat(store.claim(policy.storeKey(key), policy.storeFingerprint(key), "crashed-owner",
        Duration.ofSeconds(30)).block())
        .isInstanceOf(IdempotencyStore.Acquired.class);

    List<String> results = new ArrayList<>();
    idempotentRefund(policy, Duration.ZERO).subscribe(results::add);
    clock.advanceTimeBy(Duration.ofSeconds(29));
    assertThat(results).as("still waiting for the crashed owner").isEmpty();
    clock.advanceTimeBy(Duration.ofSeconds(1));

    assertThat(results).containsExactly("refund-1");
    assertThat(count("in_flight")).isEqualTo(1);
    assertThat(count("expired")).isEqualTo(1);
  }

  @Test
  void lateCompletionFromAnOwnerWhoseLeaseExpiredIsFencedOff() {
    // The slow owner cannot renew its lease (its store is cut off for renewals), so the key is taken over.
    IdempotencyStore cutOff = new RenewalsFail(store);
    List<UnrecordedOutcome> unrecorded = new ArrayList<>();
    IdempotencyPolicy slowOwnersPolicy = IdempotencyPolicy.builder(cutOff).keySecret(SECRET).scheduler(() -> clock)
        .meterRegistry(meters).lease(Duration.ofSeconds(10)).onUnrecorded(unrecorded::add).build();
    IdempotencyPolicy policy = IdempotencyPolicy.builder(store).keySecret(SECRET).scheduler(() -> clock)
        .meterRegistry(meters).lease(Duration.ofSeconds(10)).build();
    List<String> slowOwner = new ArrayList<>();
    idempotentRefund(slowOwnersPolicy, Duration.ofSeconds(15)).subscribe(slowOwner::add);
    clock.advanceTimeBy(Duration.ofSeconds(11));

    List<String> takeOver = new ArrayList<>();
    idempotentRefund(policy, Duration.ofSeconds(1)).subscribe(takeOver::add);
    clock.advanceTimeBy(Duration.ofSeconds(4));

    assertThat(takeOver).containsExactly("refund-1");
    assertThat(slowOwner).as("the slow owner still gets its own result").containsExactly("refund-2");
    StepVerifier.create(idempotentRefund(policy, Duration.ZERO))
        .expectNext("refund-1")
        .verifyComplete();
    assertThat(count("fenced")).isEqualTo(1);
    assertThat(unrecorded).singleElement().satisfies(event -> {
      assertThat(event.reason()).isEqualTo(UnrecordedOutcome.Reason.FENCED);
      assertThat(event.tag()).isEqualTo(policy.tag(key));
    });
  }

  @Test
  void outcomesExpireAfterTheirTtlInVirtualTime() {
    IdempotencyPolicy policy = policy().build();
    StepVerifier.create(idempotentRefund(policy, Duration.ZERO)).expectNext("refund-1").verifyComplete();
    clock.advanceTimeBy(Duration.ofHours(24).minusNanos(1));
    StepVerifier.create(idempotentRefund(policy, Duration.ZERO)).expectNext("refund-1").verifyComplete();
    clock.advanceTimeBy(Duration.ofNanos(1));

    StepVerifier.create(idempotentRefund(policy, Duration.ZERO)).expectNext("refund-2").verifyComplete();
  }

  @Test
  void claimIsLeasedForThePolicysLeaseWhateverTheDeadlineAndRenewedWhileTheOwnerRuns() {
    IdempotencyPolicy policy = policy().lease(Duration.ofSeconds(30)).failFastWhenInFlight().build();
    DeadlineSpec task = DeadlineSpec.builder(Duration.ofMinutes(20)).scheduler(() -> clock).build();
    Disposable owner = idempotentRefund(policy, Duration.ofMinutes(5)).transformDeferred(withDeadline(task))
        .subscribe(x -> {}, e -> {});
    clock.advanceTimeBy(Duration.ofSeconds(5));
    StepVerifier.create(idempotentRefund(policy, Duration.ZERO))
        .expectErrorSatisfies(e -> assertThat(((IdempotencyInFlightException) e).leaseRemaining())
            .as("30 s from the claim, not 20 min of deadline").isEqualTo(Duration.ofSeconds(25)))
        .verify();

    clock.advanceTimeBy(Duration.ofSeconds(60));      // renewed at 10, 20, ... 60 s: the lease never runs out
    StepVerifier.create(idempotentRefund(policy, Duration.ZERO))
        .expectErrorSatisfies(e -> assertThat(((IdempotencyInFlightException) e).leaseRemaining())
            .isEqualTo(Duration.ofSeconds(25)))
        .verify();
    owner.dispose();
    assertThat(executions).hasValue(0);
  }

  @Test
  void ttlShorterThanTheDeadlineInForceIsRefusedBeforeAnythingRuns() {
    IdempotencyPolicy policy = policy().ttl(Duration.ofSeconds(30)).lease(Duration.ofSeconds(30)).build();
    DeadlineSpec task = DeadlineSpec.builder(Duration.ofMinutes(3)).scheduler(() -> clock).build();

    StepVerifier.create(idempotentRefund(policy, Duration.ZERO).transformDeferred(withDeadline(task)))
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(IdempotencyLimitException.class)
              .hasMessageContaining("kept only 30s")
              .hasMessageContaining("Raise the policy's ttl");
          assertThat(((IdempotencyLimitException) e).failureKind()).isEqualTo(FailureKind.MISCONFIGURED);
        })
        .verify();
    assertThat(executions).hasValue(0);
  }

  @Test
  void ttlShorterThanTheRetryWindowIsRejectedAtBuildTime() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> policy().ttl(Duration.ofSeconds(30)).lease(Duration.ofSeconds(10))
            .longestRetryWindow(Duration.ofMinutes(2)).build())
        .withMessageContaining("ttl 30s is shorter than the longest retry window 2m")
        .withMessageContaining("Raise ttl to at least 2m");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> policy().ttl(Duration.ofSeconds(30)).lease(Duration.ofMinutes(1)).build())
        .withMessageContaining("shorter than the lease");
  }

  @Test
  void resultOverTheSizeLimitIsRefusedAndDuplicatesDoNotRunAgain() {
    IdempotencyPolicy policy = policy().maxResultBytes(16).build();
    Mono<String> bigResult = Mono.fromCallable(() -> "x".repeat(100 + executions.incrementAndGet()));

    StepVerifier.create(bigResult.transformDeferred(idempotentBy(key, policy, String.class)))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IdempotencyLimitException.class)
            .hasMessageContaining("over the policy's maxResultBytes of 16"))
        .verify();
    StepVerifier.create(bigResult.transformDeferred(idempotentBy(key, policy, String.class)))
        .expectErrorSatisfies(e -> assertThat(((CachedFailureException) e).failureKind())
            .isEqualTo(FailureKind.MISCONFIGURED))
        .verify();
    assertThat(executions).hasValue(1);
  }

  @Test
  void everyRefusalNamesItsKeyByTheKeysTagNeverByItsClientKey() {
    IdempotencyPolicy policy = policy().failFastWhenInFlight().maxResultBytes(16).build();
    String tag = policy.tag(key);
    Disposable owner = idempotentRefund(policy, Duration.ofSeconds(10)).subscribe();
    IdempotencyKey tampered = IdempotencyKey.explicit("payments.refund", "order-42", Map.of("amount", 3000));
    IdempotencyKey report = IdempotencyKey.explicit("reports.get", "r-1", Map.of());
    Mono<String> bigReport = Mono.just("x".repeat(100)).transformDeferred(idempotentBy(report, policy, String.class));

    StepVerifier.create(idempotentRefund(policy, Duration.ZERO))
        .expectErrorSatisfies(e -> assertThat(((IdempotencyInFlightException) e).source()).isEqualTo(tag))
        .verify();
    StepVerifier.create(refund(Duration.ZERO).transformDeferred(idempotentBy(tampered, policy, String.class)))
        .expectErrorSatisfies(e -> assertThat(((IdempotencyKeyMismatchException) e).source()).isEqualTo(tag))
        .verify();
    StepVerifier.create(bigReport)
        .expectErrorSatisfies(e -> assertThat(((IdempotencyLimitException) e).source()).isEqualTo(policy.tag(report)))
        .verify();
    StepVerifier.create(bigReport)
        .expectErrorSatisfies(e -> assertThat(((CachedFailureException) e).source()).isEqualTo(policy.tag(report)))
        .verify();
    assertThat(tag).startsWith("default:payments.refund:#").doesNotContain("order-42");
    owner.dispose();
  }

  @Test
  void upstreamRunsWithTheKeyInItsContext() {
    StepVerifier.create(Mono.deferContextual(ctx -> Mono.just(((IdempotencyKey) ctx.get(ContextKeys.IDEMPOTENCY_KEY))
            .value()))
            .transformDeferred(idempotentBy(key, policy().build(), String.class)))
        .expectNext("default:payments.refund:key:order-42")
        .verifyComplete();
  }

  @Test
  void genericAndEmptyResultsAreReplayed() {
    IdempotencyPolicy policy = policy().build();
    TypeReference<List<Map<String, Integer>>> type = new TypeReference<>() {};
    Mono<List<Map<String, Integer>>> rooms = Mono.fromCallable(() -> List.of(Map.of("room", executions
        .incrementAndGet())));
    IdempotencyKey roomsKey = IdempotencyKey.of("hotels.rooms", Map.of("city", "Oslo"));

    for (int i = 0; i < 2; i++) {
      StepVerifier.create(rooms.transformDeferred(idempotentBy(roomsKey, policy, type)))
          .expectNext(List.of(Map.of("room", 1)))
          .verifyComplete();
    }
    IdempotencyKey emptyKey = IdempotencyKey.of("hotels.rooms", Map.of("city", "Nowhere"));
    for (int i = 0; i < 2; i++) {
      StepVerifier.create(Mono.<String>empty().doOnSubscribe(s -> executions.incrementAndGet())
              .transformDeferred(idempotentBy(emptyKey, policy, String.class)))
          .verifyComplete();
    }
    assertThat(executions).hasValue(2);
  }

  /** A store that never renews a lease, as when renewals cannot reach it. */
  static final class RenewalsFail extends DelegatingStore {
    RenewalsFail(IdempotencyStore delegate) {
      super(delegate);
    }

    @Override
    public Mono<Boolean> renew(String key, String owner, Duration lease) {
      return Mono.error(new java.io.IOException("Connection reset"));
    }
  }
}
