package io.breakwater.breaker;

import io.breakwater.internal.breaker.InMemoryBreakerStateStore;
import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Where circuit breakers with the same name share their state, so that several instances of a service open, probe
 * and close together. The default, {@link #inMemory()}, is private to one breaker unless you pass the same store to
 * several; {@code redis-store} shares it across processes.
 *
 * <pre>{@code
 * BreakerStateStore shared = BreakerStateStore.inMemory();   // or a Redis store
 * CircuitBreaker a = CircuitBreaker.builder("search").stateStore(shared).build();
 * CircuitBreaker b = CircuitBreaker.builder("search").stateStore(shared).build();   // b follows a's transitions
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>The happy path never calls the store.</b> Each breaker decides admission from its local state; the store
 *       is used only on a transition ({@link #publish}) and to claim a half-open probe ({@link #claimProbe}).</li>
 *   <li><b>Transitions</b> made by one breaker are {@link #publish published}; every breaker of that name receives
 *       them from {@link #transitions} (its own included: breakers ignore transitions of their own
 *       {@link StateTransition#origin()}) and applies {@code OPEN} and {@code CLOSED} locally.</li>
 *   <li><b>Probes.</b> A half-open breaker that has taken one of its local probe permits also claims one of
 *       {@code permits} cluster-wide; only then is the probe call made. A denied claim means another instance is
 *       probing: the breaker rejects the call and stays open locally for another open duration (unless a published
 *       transition arrives sooner). Every granted claim is released exactly once with {@link #releaseProbe}, when the
 *       probe ends however it ends; a claim whose releaser died expires after {@code lease}.</li>
 *   <li><b>Failures of the store never fail calls.</b> A {@code publish} or {@code releaseProbe} error is logged and
 *       dropped; a {@code claimProbe} error lets the probe through (local state decides) and is never released,
 *       since the store may not have counted it (releasing it could free another instance's claim); a
 *       {@code transitions} error is retried with back-off.</li>
 * </ul>
 *
 * <p>{@code RedisBreakerStateStore} maps {@code publish}/{@code transitions} to pub/sub on a channel per breaker and
 * {@code claimProbe} to a script that increments a counter per breaker ({@code INCR}, given back by {@code DECR} when
 * over {@code permits}) and sets the lease with {@code PEXPIRE} on every grant. Implementations must be thread-safe
 * and non-blocking.
 */
public interface BreakerStateStore {

  /** Tells the other breakers of {@code transition.breaker()} about a transition this one made. */
  Mono<Void> publish(StateTransition transition);

  /** Every transition published for {@code breaker}, as long as the subscription lasts. */
  Flux<StateTransition> transitions(String breaker);

  /**
   * Claims one of {@code permits} half-open probes of {@code breaker}: {@code true} if granted. A granted claim is
   * held until {@link #releaseProbe} or for {@code lease}, whichever comes first.
   */
  Mono<Boolean> claimProbe(String breaker, int permits, Duration lease);

  /** Releases one probe claim of {@code breaker} granted by {@link #claimProbe}. */
  Mono<Void> releaseProbe(String breaker);

  /**
   * A new in-memory store: lock-free, shared by the breakers it is given to, within this JVM. Claims never expire
   * (in one process every probe releases its claim when it ends).
   */
  static BreakerStateStore inMemory() {
    return new InMemoryBreakerStateStore();
  }
}
