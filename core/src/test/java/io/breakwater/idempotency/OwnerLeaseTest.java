package io.breakwater.idempotency;

import static io.breakwater.Breakwater.idempotentBy;
import static io.breakwater.Breakwater.withDeadline;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.deadline.Deadline;
import io.breakwater.deadline.DeadlineSpec;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.context.ContextView;

/**
 * Issue 18 in one process and virtual time: completion retried in the background until stored or the lease ends,
 * lease renewal, no release after a result, the owner's {@link IdempotencyContext}, and store calls that carry the
 * caller's Context.
 */
class OwnerLeaseTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
  private final IdempotencyStore memory = IdempotencyStore.inMemory(16L << 20, () -> clock);
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final AtomicInteger refunds = new AtomicInteger();
  private final IdempotencyKey key = IdempotencyKey.explicit("payments.refund", "order-42", Map.of("amount", 30));
  private final List<UnrecordedOutcome> unrecorded = new CopyOnWriteArrayList<>();

  private IdempotencyPolicy.Builder policy(IdempotencyStore store) {
    return IdempotencyPolicy.builder(store).keySecret(DelegatingStore.SECRET).scheduler(() -> clock)
        .meterRegistry(meters).onUnrecorded(unrecorded::add);
  }

  private Mono<String> refund(Duration takes) {
    return Mono.delay(takes, clock).map(x -> "refund-" + refunds.incrementAndGet());
  }

  /** A store whose completions fail for {@code outage}, as a Redis that was killed and restarted would. */
  private final class CompletionsFailFor extends DelegatingStore {
    private final long until;
    final AtomicInteger attempts = new AtomicInteger();

    CompletionsFailFor(Duration outage) {
      super(memory);
      this.until = clock.now(java.util.concurrent.TimeUnit.NANOSECONDS) + outage.toNanos();
    }

    @Override
    public Mono<Boolean> complete(String k, String owner, Outcome outcome, Duration ttl) {
      attempts.incrementAndGet();
      return clock.now(java.util.concurrent.TimeUnit.NANOSECONDS) < until
          ? Mono.error(new IOException("Connection refused")) : super.complete(k, owner, outcome, ttl);
    }
  }

  @Test
  void aCompletionThatFailsIsRetriedInTheBackgroundUntilStoredAndTheCallerIsNotHeldUp() {
    CompletionsFailFor store = new CompletionsFailFor(Duration.ofSeconds(8));
    IdempotencyPolicy policy = policy(store).lease(Duration.ofSeconds(15)).build();

    // the caller gets its result at once, though the store refuses the completion for 8 s
    StepVerifier.create(refund(Duration.ZERO).transformDeferred(idempotentBy(key, policy, String.class)))
        .expectNext("refund-1").verifyComplete();
    clock.advanceTimeBy(Duration.ofSeconds(10));

    assertThat(store.attempts.get()).as("completion attempts, jittered backoff up to 2 s").isBetween(5, 40);
    StepVerifier.create(refund(Duration.ZERO).transformDeferred(idempotentBy(key, policy, String.class)))
        .expectNext("refund-1").verifyComplete();
    assertThat(refunds).hasValue(1);
    assertThat(unrecorded).isEmpty();
  }

  @Test
  void completionRetriesAreBoundedByTheLeaseNotByTheCallersDeadline() {
    CompletionsFailFor store = new CompletionsFailFor(Duration.ofSeconds(5));
    IdempotencyPolicy policy = policy(store).lease(Duration.ofSeconds(15)).build();
    DeadlineSpec oneSecond = DeadlineSpec.builder(Duration.ofSeconds(1)).scheduler(() -> clock).build();

    StepVerifier.create(refund(Duration.ZERO).transformDeferred(idempotentBy(key, policy, String.class))
            .transformDeferred(withDeadline(oneSecond)))
        .expectNext("refund-1").verifyComplete();
    clock.advanceTimeBy(Duration.ofSeconds(10));

    StepVerifier.create(refund(Duration.ZERO).transformDeferred(idempotentBy(key, policy, String.class)))
        .expectNext("refund-1").verifyComplete();
    assertThat(refunds).hasValue(1);
  }

  @Test
  void aCompletionThatCannotBeStoredBeforeTheLeaseEndsIsATypedEventAMeterAndACallback() {
    CompletionsFailFor store = new CompletionsFailFor(Duration.ofMinutes(5));
    IdempotencyPolicy policy = policy(store).lease(Duration.ofSeconds(9)).build();

    StepVerifier.create(refund(Duration.ZERO).transformDeferred(idempotentBy(key, policy, String.class)))
        .expectNext("refund-1").verifyComplete();
    clock.advanceTimeBy(Duration.ofSeconds(8));
    assertThat(unrecorded).as("still retrying within the lease").isEmpty();
    clock.advanceTimeBy(Duration.ofSeconds(4));

    assertThat(unrecorded).singleElement().satisfies(event -> {
      assertThat(event.reason()).isEqualTo(UnrecordedOutcome.Reason.STORE_UNAVAILABLE);
      assertThat(event.attempts()).isGreaterThan(3);
      assertThat(event.lastError()).isInstanceOf(IOException.class);
      assertThat(event.key()).isEqualTo(key);
      assertThat(event.toString()).contains(policy.tag(key)).doesNotContain("order-42");
    });
    assertThat(meters.get("breakwater.idempotency.calls").tag("outcome", "unrecorded").counter().count())
        .isEqualTo(1);
  }

  @Test
  void aCancelAfterTheResultNeverReleasesTheClaimOnlyCompleteFollows() {
    Set<String> released = ConcurrentHashMap.newKeySet();
    Set<String> completed = ConcurrentHashMap.newKeySet();
    IdempotencyStore watching = new DelegatingStore(IdempotencyStore.inMemory()) {
      @Override
      public Mono<Boolean> complete(String k, String owner, Outcome outcome, Duration ttl) {
        completed.add(owner);
        return super.complete(k, owner, outcome, ttl).delaySubscription(Duration.ofMillis(1));
      }

      @Override
      public Mono<Boolean> release(String k, String owner) {
        released.add(owner);
        return super.release(k, owner);
      }
    };
    IdempotencyPolicy policy = IdempotencyPolicy.builder(watching).keySecret(DelegatingStore.SECRET).build();
    // cancels racing results on real threads: whatever wins, an owner never sends both release and complete
    for (int i = 0; i < 500; i++) {
      IdempotencyKey raceKey = IdempotencyKey.explicit("payments.refund", "race-" + i, Map.of("i", i));
      Disposable call = Mono.fromCallable(() -> "done").subscribeOn(Schedulers.parallel())
          .transformDeferred(idempotentBy(raceKey, policy, String.class)).subscribe();
      Schedulers.parallel().schedule(call::dispose);
    }
    StepVerifier.create(Mono.delay(Duration.ofMillis(300))).expectNextCount(1).verifyComplete();

    Set<String> both = ConcurrentHashMap.newKeySet();
    both.addAll(completed);
    both.retainAll(released);
    assertThat(both).as("owners that sent release after complete").isEmpty();
  }

  @Test
  void theOwnerSeesItsClaimInItsContextAndKnowsWhenItsLeaseIsAtRisk() {
    AtomicInteger renewals = new AtomicInteger();
    IdempotencyStore renewalsFailAfterTheFirst = new DelegatingStore(memory) {
      @Override
      public Mono<Boolean> renew(String k, String owner, Duration lease) {
        return renewals.incrementAndGet() == 1 ? super.renew(k, owner, lease)
            : Mono.error(new IOException("Connection refused"));
      }
    };
    IdempotencyPolicy policy = policy(renewalsFailAfterTheFirst).lease(Duration.ofSeconds(30)).build();
    List<String> seen = new ArrayList<>();
    Mono<String> sideEffect = Mono.deferContextual(ctx -> {
      IdempotencyContext claim = IdempotencyContext.current(ctx).orElseThrow();
      seen.add(claim.key().value() + " " + claim.tookOverExpired() + " " + claim.ownerToken().length());
      return Mono.delay(Duration.ofSeconds(1), clock).repeat(59)
          .doOnNext(s -> seen.add(claim.leaseRemaining().getSeconds() + ":" + claim.stillOwner()))
          .then(Mono.just("refund"));
    });

    sideEffect.transformDeferred(idempotentBy(key, policy, String.class)).subscribe();
    clock.advanceTimeBy(Duration.ofSeconds(60));

    assertThat(seen.get(0)).isEqualTo("default:payments.refund:key:order-42 false 32");
    // renewed at 10 s (to 40 s), then every renewal fails: at risk once less than a third (10 s) is left
    assertThat(seen).contains("29:true", "21:true", "20:true", "11:true", "10:false", "1:false", "0:false");
    assertThat(IdempotencyContext.current(reactor.util.context.Context.empty())).isEmpty();
  }

  @Test
  void aTakeOverOfAnExpiredClaimIsToldSoTheSideEffectCanAskDownstreamFirst() {
    IdempotencyPolicy policy = policy(memory).build();
    memory.claim(policy.storeKey(key), policy.storeFingerprint(key), "crashed", Duration.ofSeconds(2)).block();
    clock.advanceTimeBy(Duration.ofSeconds(3));
    List<Boolean> tookOver = new ArrayList<>();
    Mono.deferContextual(ctx -> {
      tookOver.add(IdempotencyContext.current(ctx).orElseThrow().tookOverExpired());
      return Mono.just("refund");
    }).transformDeferred(idempotentBy(key, policy, String.class)).subscribe();

    assertThat(tookOver).containsExactly(true);
  }

  @Test
  void storeCallsCarryTheCallersContextAndTheBackgroundCompletionCarriesNoDeadline() {
    List<String> contexts = new CopyOnWriteArrayList<>();
    IdempotencyStore recording = new DelegatingStore(memory) {
      @Override
      public Mono<Claim> claim(String k, String fingerprint, String owner, Duration lease) {
        return Mono.deferContextual(ctx -> {
          contexts.add("claim " + describe(ctx));
          return super.claim(k, fingerprint, owner, lease);
        });
      }

      @Override
      public Mono<Boolean> complete(String k, String owner, Outcome outcome, Duration ttl) {
        return Mono.deferContextual(ctx -> {
          contexts.add("complete " + describe(ctx));
          return super.complete(k, owner, outcome, ttl);
        });
      }
    };
    IdempotencyPolicy policy = policy(recording).build();
    DeadlineSpec deadline = DeadlineSpec.builder(Duration.ofSeconds(5)).scheduler(() -> clock).build();

    StepVerifier.create(refund(Duration.ZERO).transformDeferred(idempotentBy(key, policy, String.class))
            .transformDeferred(withDeadline(deadline))
            .contextWrite(ctx -> ctx.put("tenant", "acme")))
        .expectNext("refund-1").verifyComplete();

    assertThat(contexts).containsExactly("claim tenant=acme deadline=true", "complete tenant=acme deadline=false");
  }

  private static String describe(ContextView ctx) {
    return "tenant=" + ctx.getOrDefault("tenant", "none") + " deadline=" + Deadline.from(ctx).isPresent();
  }

  /**
   * A fencing token is 128 random bits nobody can compute from tokens they saw. With {@code ThreadLocalRandom} a
   * token was two consecutive outputs: inverting its output mix on the first half gave the generator's state, hence
   * the second half and the tokens after it.
   */
  @Test
  void anOwnerTokenCannotBeComputedFromTheTokensBefore() {
    IdempotencyPolicy policy = policy(memory).build();
    List<String> tokens = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      Mono.deferContextual(ctx -> {
        tokens.add(IdempotencyContext.current(ctx).orElseThrow().ownerToken());
        return Mono.just("refund");
      }).transformDeferred(idempotentBy(IdempotencyKey.explicit("payments.refund", "order-" + i, Map.of()), policy,
          String.class)).block();
    }
    assertThat(tokens).hasSize(20).doesNotHaveDuplicates().allMatch(t -> t.matches("[0-9a-f]{32}"));
    for (String token : tokens) {
      long first = Long.parseUnsignedLong(token.substring(0, 16), 16);
      long second = Long.parseUnsignedLong(token.substring(16), 16);
      assertThat(second).as("the second half predicted from the first").isNotEqualTo(mix64(unmix64(first) + GAMMA));
    }
  }

  /** ThreadLocalRandom's seed increment and output mix (Stafford's variant 13), and the mix's inverse. */
  private static final long GAMMA = 0x9e3779b97f4a7c15L;

  private static long mix64(long z) {
    z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
    z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
    return z ^ (z >>> 33);
  }

  private static long unmix64(long z) {
    z = z ^ (z >>> 33);
    z = (z * inverse(0xc4ceb9fe1a85ec53L));
    z = z ^ (z >>> 33);
    z = (z * inverse(0xff51afd7ed558ccdL));
    return z ^ (z >>> 33);
  }

  /** The multiplicative inverse of an odd number modulo 2^64 (Newton's iteration). */
  private static long inverse(long odd) {
    long x = odd;
    for (int i = 0; i < 5; i++) {
      x *= 2 - odd * x;
    }
    return x;
  }
}
