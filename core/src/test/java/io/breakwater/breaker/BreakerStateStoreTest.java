package io.breakwater.breaker;

import static io.breakwater.Breakwater.guardedBy;
import static io.breakwater.breaker.Calls.counting;
import static org.assertj.core.api.Assertions.assertThat;

import io.breakwater.breaker.CircuitBreaker.State;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
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
    CountingStore claimsNeverAnswered = new CountingStore(shared) {
      @Override
      public Mono<Boolean> claimProbe(String breaker, int permits, Duration lease) {
        return Mono.never();
      }
    };
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
      Mono.error(new io.breakwater.failure.HttpStatusException(503)).transformDeferred(guardedBy(registry,
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
