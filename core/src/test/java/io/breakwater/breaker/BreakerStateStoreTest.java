package io.breakwater.breaker;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.breaker.Calls.counting;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker.State;
import io.breakwater.failure.HttpStatusException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/** Two breakers of one name on one store behave like two instances of a service sharing a Redis store. */
class BreakerStateStoreTest {

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

  private CircuitBreaker instance(BreakerStateStore store) {
    return Calls.on(clock, "search").minimumCalls(2).stateStore(store).build();
  }

  @Test
  void anInstanceThatOpensOpensTheOthers() {
    BreakerStateStore shared = BreakerStateStore.inMemory();
    CircuitBreaker a = instance(shared);
    CircuitBreaker b = instance(shared);
    Calls.failTimes(a, 2);
    assertThat(a.state()).isEqualTo(State.OPEN);
    assertThat(b.state()).isEqualTo(State.OPEN);
    assertThat(Calls.succeed(b)).isInstanceOf(CircuitBreakerOpenException.class);
  }

  @Test
  void onlyOneProbeAcrossInstancesAndItsSuccessClosesAll() {
    BreakerStateStore shared = BreakerStateStore.inMemory();
    CircuitBreaker a = instance(shared);
    CircuitBreaker b = instance(shared);
    Calls.failTimes(a, 2);
    clock.advanceTimeBy(a.openDuration());

    AtomicInteger upstream = new AtomicInteger();
    reactor.core.publisher.Sinks.One<String> answer = reactor.core.publisher.Sinks.one();
    counting(upstream, answer.asMono()).transformDeferred(guardedBy(a)).subscribe();
    Throwable other = Calls.outcome(b, counting(upstream, Mono.just("x")));

    assertThat(upstream).as("one probe cluster-wide").hasValue(1);
    assertThat(other).isInstanceOf(CircuitBreakerOpenException.class);
    answer.tryEmitValue("ok");
    assertThat(a.state()).isEqualTo(State.CLOSED);
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void remoteTransitionsAppearWithTheirOriginAndLocalOnlyOnesAreNotPublished() {
    BreakerStateStore shared = BreakerStateStore.inMemory();
    CircuitBreaker a = instance(shared);
    CircuitBreaker b = instance(shared);
    java.util.List<StateTransition> seenByA = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.List<StateTransition> seenByB = new java.util.concurrent.CopyOnWriteArrayList<>();
    a.transitions().subscribe(seenByA::add);
    b.transitions().subscribe(seenByB::add);
    Calls.failTimes(a, 2);
    clock.advanceTimeBy(a.openDuration());
    Disposable probe = Mono.never().transformDeferred(guardedBy(a)).subscribe();
    Calls.succeed(b); // b half-opens, its claim is denied: it stays open locally

    assertThat(seenByB).extracting(t -> t.from() + "->" + t.to())
        .containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->OPEN");
    assertThat(seenByB.get(0).origin()).isEqualTo(seenByA.get(0).origin()).isNotEqualTo(seenByB.get(1).origin());
    assertThat(seenByA).extracting(t -> t.from() + "->" + t.to()).as("b's local transitions stay local")
        .containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN");
    probe.dispose();
  }

  @Test
  void theHappyPathNeverCallsTheStore() {
    CountingStore store = new CountingStore(BreakerStateStore.inMemory());
    CircuitBreaker b = instance(store);
    for (int i = 0; i < 1000; i++) {
      Calls.succeed(b);
    }
    assertThat(store.calls).hasValue(0);
  }

  @Test
  void aFailingStoreFallsBackToLocalState() {
    BreakerStateStore broken = new BreakerStateStore() {
      @Override
      public Mono<Void> publish(StateTransition transition) {
        return Mono.error(new IllegalStateException("store down"));
      }

      @Override
      public Flux<StateTransition> transitions(String breaker) {
        return Flux.never();
      }

      @Override
      public Mono<Boolean> claimProbe(String breaker, int permits, Duration lease) {
        return Mono.error(new IllegalStateException("store down"));
      }

      @Override
      public Mono<Void> releaseProbe(String breaker) {
        return Mono.error(new IllegalStateException("store down"));
      }
    };
    CircuitBreaker b = instance(broken);
    Calls.failTimes(b, 2);
    assertThat(b.state()).isEqualTo(State.OPEN);
    clock.advanceTimeBy(b.openDuration());
    AtomicInteger upstream = new AtomicInteger();
    Disposable probe = counting(upstream, Mono.never()).transformDeferred(guardedBy(b)).subscribe();
    assertThat(Calls.outcome(b, counting(upstream, Mono.just("x")))).as("local permit still gates")
        .isInstanceOf(CircuitBreakerOpenException.class);
    probe.dispose();
    assertThat(Calls.succeed(b)).isNull();
    assertThat(upstream).hasValue(1);
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }

  /**
   * Issue 14, "also verify": a claim whose answer was an error was counted as granted (right: local state decides)
   * and then released when the probe ended, taking back a claim another instance held, so a third instance could
   * claim the probe while the first was still probing.
   */
  @Test
  void aClaimThatErredIsNeverReleasedSoAnotherInstancesClaimStaysHeld() {
    BreakerStateStore shared = BreakerStateStore.inMemory();
    CircuitBreaker a = instance(shared);
    CircuitBreaker b = instance(new FailingClaims(shared));
    CircuitBreaker c = instance(shared);
    Calls.failTimes(a, 2);
    clock.advanceTimeBy(a.openDuration());

    AtomicInteger upstream = new AtomicInteger();
    Disposable probeOfA = counting(upstream, Mono.never()).transformDeferred(guardedBy(a)).subscribe();
    Disposable probeOfB = counting(upstream, Mono.never()).transformDeferred(guardedBy(b)).subscribe();
    assertThat(upstream).as("a holds the claim; b's claim failed, so its local permit decides").hasValue(2);
    probeOfB.dispose();

    assertThat(Calls.outcome(c, counting(upstream, Mono.just("x")))).as("a still holds the only claim")
        .isInstanceOf(CircuitBreakerOpenException.class);
    assertThat(upstream).hasValue(2);
    probeOfA.dispose();
  }

  /**
   * docs/breaker.md: a probe cancelled before it is handed over gives back its local permit. Its claim, still on its
   * way, is left to its lease; the instance's next call may then probe again (here the store answers it).
   */
  @Test
  void aProbeCancelledWhileItsClaimIsOnItsWayGivesBackItsPermitSoTheNextCallProbes() {
    AtomicInteger claims = new AtomicInteger();
    CountingStore firstClaimNeverAnswers = new CountingStore(BreakerStateStore.inMemory()) {
      @Override
      public Mono<Boolean> claimProbe(String breaker, int permits, Duration lease) {
        return claims.incrementAndGet() == 1 ? Mono.never() : super.claimProbe(breaker, permits, lease);
      }
    };
    CircuitBreaker a = instance(firstClaimNeverAnswers);
    Calls.failTimes(a, 2);
    clock.advanceTimeBy(a.openDuration());

    AtomicInteger upstream = new AtomicInteger();
    Disposable probe = counting(upstream, Mono.never()).transformDeferred(guardedBy(a)).subscribe();
    probe.dispose();
    assertThat(upstream).as("the cancelled probe never reached upstream").hasValue(0);

    assertThat(Calls.outcome(a, counting(upstream, Mono.just("x")))).as("the next call probes, and succeeds").isNull();
    assertThat(claims).as("it claimed the probe again").hasValue(2);
    assertThat(upstream).hasValue(1);
    assertThat(a.state()).isEqualTo(State.CLOSED);
  }

  /** A probe cancelled before its claim was answered releases no claim: the claim another instance holds stays held. */
  @Test
  void aProbeCancelledBeforeItsClaimWasAnsweredReleasesNoClaimOfAnotherInstance() {
    BreakerStateStore shared = BreakerStateStore.inMemory();
    CountingStore claimsNeverAnswered = new NeverAnsweredClaims(shared);
    CircuitBreaker a = instance(shared);
    CircuitBreaker b = instance(claimsNeverAnswered);
    CircuitBreaker c = instance(shared);
    Calls.failTimes(a, 2);
    clock.advanceTimeBy(a.openDuration());

    AtomicInteger upstream = new AtomicInteger();
    Disposable probeOfA = counting(upstream, Mono.never()).transformDeferred(guardedBy(a)).subscribe();
    counting(upstream, Mono.never()).transformDeferred(guardedBy(b)).subscribe().dispose();
    assertThat(upstream).as("a probes; b's probe was cancelled while claiming").hasValue(1);

    assertThat(Calls.outcome(c, counting(upstream, Mono.just("x")))).as("a still holds the only claim")
        .isInstanceOf(CircuitBreakerOpenException.class);
    assertThat(upstream).hasValue(1);
    probeOfA.dispose();
  }

  /** The same for a tool and its family, both probing: the cancelled probe gives back the family's permit too. */
  @Test
  void aProbeOfAToolAndItsFamilyCancelledWhileClaimingGivesBackBothPermits() {
    AtomicInteger claims = new AtomicInteger();
    CountingStore firstClaimNeverAnswers = new CountingStore(BreakerStateStore.inMemory()) {
      @Override
      public Mono<Boolean> claimProbe(String breaker, int permits, Duration lease) {
        return claims.incrementAndGet() == 1 ? Mono.never() : super.claimProbe(breaker, permits, lease);
      }
    };
    CircuitBreakerRegistry registry = CircuitBreakerRegistry.builder()
        .breakers(name -> Calls.on(clock, name).minimumCalls(2).stateStore(firstClaimNeverAnswers).build())
        .build();
    AtomicInteger upstream = new AtomicInteger();
    for (int i = 0; i < 2; i++) {
      Mono.error(new HttpStatusException(503)).transformDeferred(guardedBy(registry,
          "gmail.send")).subscribe(v -> { }, e -> { });
    }
    assertThat(registry.familyBreaker("gmail").state()).isEqualTo(State.OPEN);
    clock.advanceTimeBy(registry.familyBreaker("gmail").openDuration());

    counting(upstream, Mono.never()).transformDeferred(guardedBy(registry, "gmail.send")).subscribe().dispose();
    java.util.concurrent.atomic.AtomicReference<Object> next = new java.util.concurrent.atomic.AtomicReference<>();
    counting(upstream, Mono.just("x")).transformDeferred(guardedBy(registry, "gmail.send"))
        .subscribe(next::set, next::set);
    assertThat(next).as("the next call probes the family and the tool, and succeeds").hasValue("x");
    assertThat(registry.familyBreaker("gmail").state()).isEqualTo(State.CLOSED);
  }

  /**
   * docs/breaker.md: a call the tool rejects gives the family's admission back, a family probe permit included, and a
   * probe's claim is released as soon as the call ends. Here the tool's claim is denied (another instance probes
   * gmail.send), so the family's claim this instance was granted is released at once, not held until its lease.
   */
  @Test
  void aToolProbeDeniedBecauseAnotherInstanceProbesTheToolReleasesTheFamilyClaimItWasGranted() {
    BreakerStateStore shared = BreakerStateStore.inMemory();
    CircuitBreakerRegistry a = gmailInstance(shared);
    CircuitBreakerRegistry b = gmailInstance(shared);
    openGmailUntilItMayBeProbed(a);
    assertThat(shared.claimProbe("gmail.send", 1, Duration.ofSeconds(30)).block())
        .as("another instance probes gmail.send").isTrue();

    AtomicInteger upstream = new AtomicInteger();
    Throwable rejected = outcome(a, "gmail.send", counting(upstream, Mono.just("x")));
    assertThat(rejected).isInstanceOf(CircuitBreakerOpenException.class);
    assertThat(((CircuitBreakerOpenException) rejected).source()).isEqualTo("gmail.send");

    assertThat(outcome(b, "gmail.list", counting(upstream, Mono.just("x"))))
        .as("the family's claim was given back: another instance probes the family").isNull();
    assertThat(upstream).hasValue(1);
    assertThat(b.familyBreaker("gmail").state()).isEqualTo(State.CLOSED);
  }

  /**
   * A probe cancelled while its family's claim is unanswered releases no family claim (docs/breaker.md: only a claim
   * the store granted is released): the family claim another instance holds stays held.
   */
  @Test
  void aProbeCancelledBeforeItsFamilyClaimWasAnsweredReleasesNoFamilyClaimOfAnotherInstance() {
    BreakerStateStore shared = BreakerStateStore.inMemory();
    CountingStore claimsNeverAnswered = new NeverAnsweredClaims(shared);
    CircuitBreakerRegistry a = gmailInstance(shared);
    CircuitBreakerRegistry b = gmailInstance(claimsNeverAnswered);
    CircuitBreakerRegistry c = gmailInstance(shared);
    openGmailUntilItMayBeProbed(a);

    AtomicInteger upstream = new AtomicInteger();
    Disposable probeOfA = counting(upstream, Mono.never()).transformDeferred(guardedBy(a, "gmail.send")).subscribe();
    counting(upstream, Mono.never()).transformDeferred(guardedBy(b, "gmail.list")).subscribe().dispose();
    assertThat(upstream).as("a probes the family; b's probe was cancelled while claiming").hasValue(1);

    Throwable rejected = outcome(c, "gmail.list", counting(upstream, Mono.just("x")));
    assertThat(rejected).as("a still holds the family's only claim").isInstanceOf(CircuitBreakerOpenException.class);
    assertThat(((CircuitBreakerOpenException) rejected).source()).isEqualTo("gmail");
    assertThat(upstream).hasValue(1);
    probeOfA.dispose();
  }

  /**
   * docs/breaker.md: a claim the store failed to answer is never released, however its probe ends: here the family's
   * and the tool's, by a probe that ends with an error that does not count and by one cancelled after its hand-over.
   */
  @Test
  void probesWhoseFamilyAndToolClaimsFailedReleaseNoClaimOfAnotherInstanceHoweverTheyEnd() {
    BreakerStateStore shared = BreakerStateStore.inMemory();
    CircuitBreakerRegistry a = gmailInstance(shared);
    CircuitBreakerRegistry b = gmailInstance(new FailingClaims(shared));
    openGmailUntilItMayBeProbed(a);

    AtomicInteger upstream = new AtomicInteger();
    Disposable probeOfA = counting(upstream, Mono.never()).transformDeferred(guardedBy(a, "gmail.send")).subscribe();
    assertThat(outcome(b, "gmail.send", counting(upstream, Mono.error(new HttpStatusException(404)))))
        .as("b's claims failed: its local permits let the probe through")
        .isNotInstanceOf(CircuitBreakerOpenException.class);
    counting(upstream, Mono.never()).transformDeferred(guardedBy(b, "gmail.send")).subscribe().dispose();
    assertThat(upstream).as("a's probe and b's two").hasValue(3);

    assertThat(shared.claimProbe("gmail", 1, Duration.ofSeconds(30)).block()).as("a still holds the family's claim")
        .isFalse();
    assertThat(shared.claimProbe("gmail.send", 1, Duration.ofSeconds(30)).block()).as("and the tool's").isFalse();
    probeOfA.dispose();
  }

  /**
   * docs/breaker.md: a probe's claim is released as soon as the probe call ends, however it ends; here a family's
   * probe (its tool's own breaker is closed) cancelled after its hand-over, then one ending with an ignored error.
   */
  @Test
  void aFamilyProbeReleasesTheFamilysClaimWhenCancelledOrWhenItEndsWithAnError() {
    BreakerStateStore shared = BreakerStateStore.inMemory();
    CircuitBreakerRegistry a = gmailInstance(shared);
    CircuitBreakerRegistry b = gmailInstance(shared);
    openGmailUntilItMayBeProbed(a);

    AtomicInteger upstream = new AtomicInteger();
    Disposable probeOfA = counting(upstream, Mono.never()).transformDeferred(guardedBy(a, "gmail.list")).subscribe();
    assertThat(upstream).as("a probes the family").hasValue(1);
    probeOfA.dispose();
    assertThat(outcome(b, "gmail.list", counting(upstream, Mono.error(new HttpStatusException(404)))))
        .as("a's cancelled probe gave its claim back: b probes the family")
        .isInstanceOf(HttpStatusException.class);
    assertThat(outcome(a, "gmail.list", counting(upstream, Mono.just("x"))))
        .as("b's probe, ended by an ignored error, gave its claim back: a probes again and closes the family").isNull();
    assertThat(upstream).hasValue(3);
    assertThat(a.familyBreaker("gmail").state()).isEqualTo(State.CLOSED);
  }

  /** docs/breaker.md: every breaker of a name applies the CLOSED it receives, and shows it in its transitions. */
  @Test
  void aRemoteCloseAppearsInTheReceiversTransitionsWithTheSendersOrigin() {
    BreakerStateStore shared = BreakerStateStore.inMemory();
    CircuitBreaker a = instance(shared);
    CircuitBreaker b = instance(shared);
    java.util.List<StateTransition> seenByB = new java.util.concurrent.CopyOnWriteArrayList<>();
    b.transitions().subscribe(seenByB::add);
    Calls.failTimes(a, 2);
    clock.advanceTimeBy(a.openDuration());
    assertThat(Calls.succeed(a)).as("a's probe closes it").isNull();

    assertThat(b.state()).isEqualTo(State.CLOSED);
    assertThat(seenByB).extracting(t -> t.from() + "->" + t.to()).containsExactly("CLOSED->OPEN", "OPEN->CLOSED");
    assertThat(seenByB.get(1).origin()).isEqualTo(seenByB.get(0).origin());
  }

  /** The in-memory store counts claims: releasing one of two held claims frees one probe, not both. */
  @Test
  void theInMemoryStoreReleasesOneClaimAtATime() {
    BreakerStateStore store = BreakerStateStore.inMemory();
    Duration lease = Duration.ofSeconds(30);
    assertThat(store.claimProbe("search", 2, lease).block()).isTrue();
    assertThat(store.claimProbe("search", 2, lease).block()).isTrue();
    store.releaseProbe("search").block();
    assertThat(store.claimProbe("search", 2, lease).block()).isTrue();
    assertThat(store.claimProbe("search", 2, lease).block()).as("two claims held again").isFalse();
  }

  /** One instance of a service with the gmail tools, its breakers (family included) built before any call. */
  private CircuitBreakerRegistry gmailInstance(BreakerStateStore store) {
    CircuitBreakerRegistry registry = CircuitBreakerRegistry.builder()
        .breakers(name -> Calls.on(clock, name).minimumCalls(2).stateStore(store).build())
        .build();
    registry.breaker("gmail.send");
    registry.breaker("gmail.list");
    registry.familyBreaker("gmail");
    return registry;
  }

  /** Opens gmail.send and the gmail family (published to every instance of the store), then waits them out. */
  private void openGmailUntilItMayBeProbed(CircuitBreakerRegistry registry) {
    for (int i = 0; i < 2; i++) {
      assertThat(outcome(registry, "gmail.send", Mono.error(new HttpStatusException(503))))
          .isNotInstanceOf(CircuitBreakerOpenException.class);
    }
    assertThat(registry.familyBreaker("gmail").state()).isEqualTo(State.OPEN);
    clock.advanceTimeBy(registry.familyBreaker("gmail").openDuration());
  }

  private static Throwable outcome(CircuitBreakerRegistry registry, String tool, Mono<String> call) {
    AtomicReference<Throwable> error = new AtomicReference<>();
    call.transformDeferred(guardedBy(registry, tool)).subscribe(v -> { }, error::set);
    return error.get();
  }

  /** A store whose probe claims are never answered; everything else goes to {@code delegate}. */
  static final class NeverAnsweredClaims extends CountingStore {
    NeverAnsweredClaims(BreakerStateStore delegate) {
      super(delegate);
    }

    @Override
    public Mono<Boolean> claimProbe(String breaker, int permits, Duration lease) {
      return Mono.never();
    }
  }

  /** A store whose probe claims fail; everything else goes to {@code delegate}. */
  static final class FailingClaims extends CountingStore {
    FailingClaims(BreakerStateStore delegate) {
      super(delegate);
    }

    @Override
    public Mono<Boolean> claimProbe(String breaker, int permits, Duration lease) {
      return Mono.error(new IllegalStateException("claim timed out"));
    }
  }

  static class CountingStore implements BreakerStateStore {
    final BreakerStateStore delegate;
    final AtomicInteger calls = new AtomicInteger();

    CountingStore(BreakerStateStore delegate) {
      this.delegate = delegate;
    }

    @Override
    public Mono<Void> publish(StateTransition transition) {
      calls.incrementAndGet();
      return delegate.publish(transition);
    }

    @Override
    public Flux<StateTransition> transitions(String breaker) {
      return delegate.transitions(breaker);
    }

    @Override
    public Mono<Boolean> claimProbe(String breaker, int permits, Duration lease) {
      calls.incrementAndGet();
      return delegate.claimProbe(breaker, permits, lease);
    }

    @Override
    public Mono<Void> releaseProbe(String breaker) {
      calls.incrementAndGet();
      return delegate.releaseProbe(breaker);
    }
  }
}
